"""How the Run screen copes with a busy event log.

A separate feeder process appends events to a run's events.jsonl at N events/s (mostly
rollouts, with reflections, gate decisions, steps and budget updates mixed in) while the
app follows the run headless. Every ~0.1 s the bench presses a key (switching tabs) and
records how long until the screen's action ran; each rate runs until --presses key presses
(100 by default, so p95 is not simply the maximum). A ticker on the app's event loop
records the longest gap between its wake-ups: a freeze, reported apart from the key p95.
It prints, per rate, the key latency (p50, p95, max), the longest freeze, how many
events the screen had shown when the feed stopped, and the garbage collector's work while
the feed ran (a full collection scans every object it tracks, stored events included):
full and young collections (count, longest, total), the objects it tracks and holds
frozen at the end, and the garbage a full collection then finds (held back, not yet
reclaimed). Then the
highest rate whose key p95 is within 50 ms, and the start-up time to first paint (imports
+ mounting the home screen and painting it).

    .venv/bin/python bench/tui_events.py [--rates 100,1000,3000,10000] [--presses 100]
"""

from __future__ import annotations

import time

T0 = time.perf_counter()  # before textual and the app are imported: start-up includes them

import argparse  # noqa: E402
import asyncio  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

LIMIT_MS = 50.0
TICK_S = 0.005  # the freeze ticker's sleep: a gap well above it is the loop held up


class CollectionClock:
    """Counts and times the garbage collector's passes through `gc.callbacks`."""

    def __init__(self) -> None:
        self.full_ms: list[float] = []  # generation 2: every tracked object scanned
        self.young_ms = 0.0  # generations 0 and 1, summed
        self.young = 0
        self._started = 0.0

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        ms = (time.perf_counter() - self._started) * 1000
        if info["generation"] == 2:
            self.full_ms.append(ms)
        else:
            self.young += 1
            self.young_ms += ms

    def __enter__(self) -> CollectionClock:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc) -> None:
        gc.callbacks.remove(self)


def _event_lines(n: int) -> list[str]:
    """A repeating pattern of realistic events, serialised once."""
    from core.run.events import (
        BudgetUpdated,
        GateDecided,
        ReflectionText,
        RolloutFinished,
        StepFinished,
    )

    lines = []
    step = 1
    for i in range(n):
        if i % 50 == 49:
            event = StepFinished(
                step=step,
                epoch=1,
                train_hard=0.5,
                train_soft=0.5,
                best_val=0.5 + (step % 10) / 20,
                accepted=step % 2 == 0,
                edit_budget=2,
            )
            step += 1
        elif i % 50 == 48:
            event = GateDecided(
                step=step,
                accepted=step % 2 == 0,
                best_before=0.5,
                candidate_score=0.6,
                items_scored=5,
                items_total=5,
                rollouts_saved=0,
            )
        elif i % 25 == 0:
            event = ReflectionText(
                step=step,
                kind="failure",
                group=0,
                text="The answers were long; the skill has no format rule. " * 3,
            )
        elif i % 10 == 0:
            event = BudgetUpdated(
                calls=i,
                cache_hits=0,
                input_tokens=i * 300,
                output_tokens=i * 20,
                cost_usd=i * 0.0001,
                cap_tokens=10**9,
            )
        else:
            event = RolloutFinished(
                phase="train",
                step=step,
                split="train",
                skill_hash="h",
                item_id=f"item-{i % 97:03d}",
                task_type="qa",
                hard=float(i % 2),
                soft=float(i % 2),
                latency_s=0.3,
                input_tokens=300,
                output_tokens=20,
                prediction="an answer " * 5,
            )
        lines.append(json.dumps(event.to_dict()) + "\n")
    return lines


def _pattern_size(rate: int) -> int:
    """Events serialised once and written over and over: five seconds' worth (at most
    50,000), whole steps of 50 events; its steps are the distinct steps a feed holds."""
    return min(int(rate * 5), 50_000) // 50 * 50 or 50


def feed(path: Path, rate: int, seconds: float) -> None:
    """Feeder process: append `rate` events/s in 10 ms slices, for at most `seconds` or
    until a `.stop` file appears beside the log (the bench has its presses)."""
    pattern = _event_lines(_pattern_size(rate))  # serialised before the clock starts
    stop = path.with_suffix(".stop")
    written = 0
    start = time.perf_counter()
    with path.open("a", encoding="utf-8") as fh:
        while (elapsed := time.perf_counter() - start) < seconds and not stop.exists():
            due = int(elapsed * rate)
            if due > written:
                fh.write("".join(pattern[i % len(pattern)] for i in range(written, due)))
                fh.flush()
                written = due
            time.sleep(0.01)
    print(written)


async def measure_rate(rate: int, seconds: float, presses: int = 100) -> dict:
    from textual import events

    from core.run.events import RunStarted
    from skillopt_tui.app.app import SkillOptApp
    from skillopt_tui.app.screens.run import RunScreen

    run_dir = Path(tempfile.mkdtemp(prefix="skillopt-bench-")) / "bench-run"
    run_dir.mkdir()
    start = RunStarted(
        run_id="bench-run",
        env="bench",
        strategy="s",
        target_model="t",
        optimizer_model="o",
        epochs=1,
        steps_per_epoch=10**6,
        train_items=100,
        val_items=10,
        test_items=0,
    )
    (run_dir / "events.jsonl").write_text(json.dumps(start.to_dict()) + "\n")

    handled: list[float] = []
    original = RunScreen.action_tab

    def timed_tab(self, tab: str) -> None:
        original(self, tab)
        handled.append(time.perf_counter())

    RunScreen.action_tab = timed_tab
    latencies: list[float] = []
    try:
        app = SkillOptApp(run_dir.parent, run=run_dir, refresh_runs=False)
        async with app.run_test(size=(100, 30)) as pilot:
            while not isinstance(app.screen, RunScreen) or app.screen.updates == 0:
                await pilot.pause(0.01)
            feeder = subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--feed",
                    str(run_dir / "events.jsonl"),
                    str(rate),
                    str(seconds),
                ],
                stdout=subprocess.PIPE,
                text=True,
            )
            await pilot.pause(0.3)
            gaps: list[float] = []

            async def ticker() -> None:
                last = time.perf_counter()
                while True:
                    await asyncio.sleep(TICK_S)
                    now = time.perf_counter()
                    gaps.append(now - last)
                    last = now

            ticking = asyncio.ensure_future(ticker())
            keys = ["2", "1"]
            with CollectionClock() as clock:
                while feeder.poll() is None and len(latencies) < presses:
                    before = len(handled)
                    key = keys[len(latencies) % 2]
                    sent = time.perf_counter()
                    app.post_message(events.Key(key, key))  # as the terminal driver does
                    while len(handled) == before:
                        await asyncio.sleep(0.001)
                    latencies.append((handled[-1] - sent) * 1000)
                    await asyncio.sleep(0.1)
            ticking.cancel()
            tracked, frozen = len(gc.get_objects()), gc.get_freeze_count()
            gc.unfreeze()
            held = gc.collect()  # garbage the app still held (frozen or not yet collected)
            (run_dir / "events.stop").touch()
            written = int(feeder.communicate()[0].strip() or 0)
            screen = app.screen
            await pilot.pause(1.0)  # let the follower catch up
            steps_shown = screen.steps_done
    finally:
        RunScreen.action_tab = original
    return {
        "rate": rate,
        "written": written,
        "steps_shown": steps_shown,
        "steps_written": min(written, _pattern_size(rate)) // 50,  # distinct steps
        "p50_ms": statistics.median(latencies) if latencies else float("nan"),
        "p95_ms": _p95(latencies),
        "max_ms": max(latencies) if latencies else float("nan"),
        "presses": len(latencies),
        "freeze_ms": max(gaps, default=0.0) * 1000,
        "full_gcs": len(clock.full_ms),
        "full_gc_max_ms": max(clock.full_ms, default=0.0),
        "full_gc_total_ms": sum(clock.full_ms),
        "young_gcs": clock.young,
        "young_gc_total_ms": clock.young_ms,
        "tracked": tracked,
        "frozen": frozen,
        "held": held,
    }


def _p95(values: list[float]) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def measure_startup() -> float:
    """Seconds from the start of this process to the home screen's first paint."""
    from skillopt_tui.app.app import SkillOptApp
    from skillopt_tui.app.screens.home import HomeScreen

    app = SkillOptApp(Path(tempfile.mkdtemp()), refresh_runs=False)
    async with app.run_test(size=(100, 30)) as pilot:
        while not isinstance(app.screen, HomeScreen):
            await pilot.pause(0.001)
        await pilot.pause(0)  # one frame: the compositor has painted the screen
        return time.perf_counter() - T0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default="100,1000,3000,10000")
    parser.add_argument("--seconds", type=float, default=120.0, help="most seconds per rate")
    parser.add_argument("--presses", type=int, default=100, help="key presses per rate")
    parser.add_argument("--feed", nargs=3, metavar=("PATH", "RATE", "SECONDS"))
    args = parser.parse_args()
    if args.feed:
        feed(Path(args.feed[0]), int(args.feed[1]), float(args.feed[2]))
        return
    startup = asyncio.run(measure_startup())
    print(f"start-up to first paint (imports included): {startup * 1000:.0f} ms")
    print(
        f"{'events/s':>9} {'written':>8} {'steps shown':>11} {'key p50':>8} {'key p95':>8}"
        f" {'key max':>8} presses {'freeze':>8}  full gc: n/max/total  young gc: n/total"
        f"  tracked+frozen objects  garbage held"
    )
    best, failed = None, False
    for rate in (int(r) for r in args.rates.split(",")):
        r = asyncio.run(measure_rate(rate, args.seconds, args.presses))
        print(
            f"{r['rate']:>9} {r['written']:>8} {r['steps_shown']:>5}/{r['steps_written']:<5}"
            f" {r['p50_ms']:>6.1f}ms {r['p95_ms']:>6.1f}ms {r['max_ms']:>6.1f}ms"
            f" {r['presses']:>7} {r['freeze_ms']:>6.0f}ms"
            f"  {r['full_gcs']:>3}/{r['full_gc_max_ms']:.0f}/{r['full_gc_total_ms']:.0f}ms"
            f"  {r['young_gcs']:>5}/{r['young_gc_total_ms']:.0f}ms  {r['tracked']:>7}+{r['frozen']:<7}  {r['held']:>7}",
            flush=True,
        )
        if r["p95_ms"] > LIMIT_MS:
            failed = True
        elif not failed:
            best = rate
    print(
        f"highest rate (and every rate below it) with 95% of key presses handled within"
        f" {LIMIT_MS:.0f} ms: "
        f"{best if best is not None else 'none of those tried'} events/s"
    )


if __name__ == "__main__":
    main()
