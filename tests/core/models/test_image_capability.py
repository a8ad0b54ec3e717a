"""Text-only backends refuse a request with image parts before anything is sent."""

import pytest

from core.config import config_from_dict
from core.models.client import ModelClient, RoleRuntime
from core.models.factory import build_model_client
from core.models.scripted import ScriptedBackend
from core.models.types import BadRequestError

IMAGE_MESSAGE = [
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What does the page say?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ],
    }
]


def client_with(accepts_images: bool) -> tuple[ModelClient, ScriptedBackend]:
    backend = ScriptedBackend(lambda r: "ok")
    runtime = RoleRuntime(
        role="target", kind="scripted", model="m", backend=backend, accepts_images=accepts_images
    )
    return ModelClient({"target": runtime}), backend


async def test_a_text_only_role_refuses_images_without_sending():
    client, backend = client_with(accepts_images=False)
    with pytest.raises(BadRequestError, match=r"models\.target .* text-only backend"):
        await client.complete(IMAGE_MESSAGE, role="target")
    assert backend.requests == []
    text = await client.complete([{"role": "user", "content": "hello"}], role="target")
    assert text.text == "ok"  # text requests still go through


async def test_a_multimodal_role_sends_images():
    client, backend = client_with(accepts_images=True)
    assert (await client.complete(IMAGE_MESSAGE, role="target")).text == "ok"
    assert len(backend.requests) == 1


def test_the_embedded_model_and_the_anthropic_backend_are_text_only():
    config = config_from_dict(
        {
            "models": {"target": {"backend": "local"}, "optimizer": {"backend": "anthropic"}},
            "cache": {"enabled": False},
        }
    )
    client = build_model_client(config, environ={"ANTHROPIC_API_KEY": "test-key"})
    assert client.runtime("target").accepts_images is False
    assert client.runtime("optimizer").accepts_images is False
    openai = build_model_client(
        config_from_dict(
            {"models": {"target": {"backend": "openai"}}, "cache": {"enabled": False}}
        ),
        environ={"OPENAI_API_KEY": "test-key"},
    )
    assert openai.runtime("target").accepts_images is True
