"""tests/conftest.py keeps tests that share a resource on one pytest-xdist worker: a
module whose tests share a module-scoped fixture is one group; a test sharing nothing
gets no group and may run on any worker. The embedded model is no such resource: its
tests share the session's one server from any worker."""

from __future__ import annotations

import pytest

from core.models.local_server import ATTACH_ENV
from tests.conftest import shared_resource_group, uses_session_server


@pytest.fixture(scope="module")
def built_once() -> list[str]:
    return []


def test_a_module_scoped_fixture_puts_its_module_in_one_group(request, built_once):
    mark = request.node.get_closest_marker("xdist_group")
    assert mark is not None and mark.args == ("tests/test_parallel_groups.py",)
    assert shared_resource_group(request.node) == "tests/test_parallel_groups.py"


def test_the_embedded_tests_spread_over_the_workers(request):
    request.node.add_marker(pytest.mark.embedded)  # as an embedded module's pytestmark
    assert shared_resource_group(request.node) is None
    assert uses_session_server(request.node)


def test_a_test_of_the_server_itself_starts_its_own(request):
    request.node.add_marker(pytest.mark.embedded(own_server=True))
    assert not uses_session_server(request.node)


@pytest.mark.embedded(own_server=True)
def test_only_session_server_users_see_its_address():
    import os

    assert ATTACH_ENV not in os.environ


def test_plugin_fixtures_of_wider_scope_group_nothing(request, tmp_path_factory):
    # tmp_path_factory is session-scoped but pytest's own; tmp_path per test is private.
    assert "built_once" not in request.fixturenames
    assert shared_resource_group(request.node) is None
