"""The container files as an operator would run them (issue 31), checked without a Docker
daemon: the Dockerfile's stages and the compose stack's services, read with a parser and
asserted property by property (hadolint is not on PyPI as a Python package)."""

from __future__ import annotations

import ipaddress
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml

from evidence_gateway.settings import Settings
from tests.dockerfile import Dockerfile, Stage, parse

ROOT = Path(__file__).resolve().parent.parent
BUILD_TOOLS = ("gcc", "g++", "make", "build-essential", "clang", "cargo", "rustc", "libpq-dev", "python3-dev")


@pytest.fixture(scope="module")
def dockerfile() -> Dockerfile:
    return parse(ROOT / "Dockerfile")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "compose.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def final(dockerfile: Dockerfile) -> Stage:
    return dockerfile.stages[-1]


def builder(dockerfile: Dockerfile) -> Stage:
    (stage,) = [s for s in dockerfile.stages if s.name == "builder"]
    return stage


def wheel_command(dockerfile: Dockerfile) -> list[str]:
    """The builder's ``pip wheel`` command, as tests/test_container_run.py runs it too."""
    (run,) = [r for r in builder(dockerfile).all("RUN") if "pip wheel" in r.value]
    return [w for w in run.words() if not w.startswith("--mount=")]


# ---- the Dockerfile ---------------------------------------------------------------------------------


def test_two_stages_from_pinned_slim_images(dockerfile: Dockerfile) -> None:
    assert len(dockerfile.stages) >= 2 and dockerfile.stages[0].name == "builder"
    for stage in dockerfile.stages:
        image = dockerfile.base_of(stage)
        assert ":" in image and not image.endswith(":latest"), image
    assert "slim" in dockerfile.base_of(final(dockerfile))


def test_the_builder_makes_the_wheel_from_the_package_alone(dockerfile: Dockerfile) -> None:
    words = wheel_command(dockerfile)
    assert words[:2] == ["pip", "wheel"] and "--wheel-dir" in words and words[-1] == "."
    copied = " ".join(c.value for c in builder(dockerfile).all("COPY"))
    for needed in ("pyproject.toml", "README.md", "LICENSE", "evidence_gateway"):
        assert needed in copied
    ignore = (ROOT / ".dockerignore").read_text().split()
    for needed in ("!pyproject.toml", "!README.md", "!LICENSE", "!evidence_gateway/"):
        assert needed in ignore


def test_the_runtime_installs_the_wheel_and_holds_no_build_tools_or_source(dockerfile: Dockerfile) -> None:
    stage = final(dockerfile)
    runs = " ".join(r.value for r in stage.all("RUN"))
    assert re.search(r"pip install [^&]*--no-index --find-links /wheels evidence-gateway", runs), runs
    assert "from=builder" in runs and "type=bind" in runs, "wheels mounted for the install, never copied"
    assert not stage.all("COPY") and not stage.all("ADD"), "no source tree or wheel files in the image"
    installed = re.findall(r"apt-get install[^&;]*", runs)
    assert not [t for t in BUILD_TOOLS for i in installed if re.search(rf"\b{re.escape(t)}\b", i)]


def test_the_runtime_runs_as_an_unprivileged_user(dockerfile: Dockerfile) -> None:
    user = final(dockerfile).last("USER")
    assert user is not None
    name = user.value.split(":")[0]
    assert name not in ("root", "0")
    runs = " ".join(r.value for r in final(dockerfile).all("RUN"))
    assert re.search(rf"useradd [^&]*--uid {name}\b", runs), "the uid exists in the image"


def test_the_health_check_asks_readyz(dockerfile: Dockerfile) -> None:
    check = final(dockerfile).last("HEALTHCHECK")
    assert check is not None and "CMD" in check.value
    assert "/readyz" in check.value and "timeout" in check.value
    entry = final(dockerfile).last("ENTRYPOINT")
    cmd = final(dockerfile).last("CMD")
    assert entry is not None and entry.words() == ["evidence-gateway"]
    assert cmd is not None and cmd.words()[:3] == ["serve", "--host", "0.0.0.0"]
    assert "8000" in cmd.words() and "8000" in check.value


# ---- compose.yaml -----------------------------------------------------------------------------------


def services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found = compose["services"]
    assert isinstance(found, dict)
    return found


def command_of(service: dict[str, Any]) -> list[str]:
    command = service.get("command", [])
    return shlex.split(command) if isinstance(command, str) else [str(c) for c in command]


def gateway_services(compose: dict[str, Any], first: str) -> dict[str, dict[str, Any]]:
    return {n: s for n, s in services(compose).items() if command_of(s)[:1] == [first]}


def test_the_stack_holds_every_part(compose: dict[str, Any]) -> None:
    found = services(compose)
    assert found["postgres"]["image"].startswith("postgres:")
    assert found["redis"]["image"].startswith("redis:")
    for name in ("postgres", "redis"):
        assert found[name]["healthcheck"]["test"], name
    assert len(gateway_services(compose, "serve")) == 2
    assert len(gateway_services(compose, "worker")) == 1
    assert [command_of(s) for s in gateway_services(compose, "db").values()] == [["db", "upgrade"]]


def test_the_upgrade_runs_once_before_any_node(compose: dict[str, Any]) -> None:
    ((name, upgrade),) = gateway_services(compose, "db").items()
    assert upgrade["restart"] == "no"
    assert upgrade["depends_on"]["postgres"]["condition"] == "service_healthy"
    for node in [*gateway_services(compose, "serve").values(), *gateway_services(compose, "worker").values()]:
        assert node["depends_on"][name]["condition"] == "service_completed_successfully"


def test_background_work_runs_in_the_worker_only(compose: dict[str, Any]) -> None:
    for name, node in gateway_services(compose, "serve").items():
        assert "--no-dispatcher" in command_of(node), name
        assert str(node["environment"]["EVIDENCE_BACKGROUND_WORK"]).lower() == "false", name
        assert "--host" in command_of(node) and "0.0.0.0" in command_of(node)
    for worker in gateway_services(compose, "worker").values():
        assert str(worker["environment"].get("EVIDENCE_BACKGROUND_WORK", "true")).lower() == "true"


def test_every_gateway_service_shares_one_configuration(compose: dict[str, Any]) -> None:
    nodes = {**gateway_services(compose, "serve"), **gateway_services(compose, "worker")}
    nodes.update(gateway_services(compose, "db"))
    known = {f"EVIDENCE_{name.upper()}" for name in Settings.model_fields}
    for name, node in nodes.items():
        env = node["environment"]
        url = env["EVIDENCE_DATABASE_URL"]
        assert url.startswith("postgresql://") and "@postgres:5432/" in url
        assert env["EVIDENCE_REDIS_URL"].startswith("redis://redis:")
        assert {k for k in env if k.startswith("EVIDENCE_")} <= known, f"{name}: a setting the app does not read"
        assert node.get("image") == services(compose)["migrate"]["image"] and node.get("build") == "."


def test_the_proxy_fronts_both_nodes_and_is_the_one_trusted(compose: dict[str, Any]) -> None:
    found = services(compose)
    proxy = found["proxy"]
    assert proxy["image"].startswith("nginx:")
    ((mount,),) = [proxy["volumes"]]
    source = mount.split(":")[0]
    conf = (ROOT / source).read_text()
    nodes = gateway_services(compose, "serve")
    for name in nodes:
        assert re.search(rf"server {re.escape(name)}:8000\b", conf), name
        assert proxy["depends_on"][name]["condition"] == "service_healthy"
    assert "proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;" in conf
    assert "proxy_set_header Upgrade $http_upgrade;" in conf, "GraphQL subscriptions go through"
    address = ipaddress.ip_address(proxy["networks"]["backend"]["ipv4_address"])
    subnet = ipaddress.ip_network(compose["networks"]["backend"]["ipam"]["config"][0]["subnet"])
    assert address in subnet
    for name, node in nodes.items():
        trusted = [ipaddress.ip_network(p.strip()) for p in node["environment"]["EVIDENCE_TRUSTED_PROXIES"].split(",")]
        assert any(address in t for t in trusted), name
        assert subnet not in trusted, f"{name}: only the proxy, not every container, may name the client"
    assert any(p.endswith(":80") for p in proxy["ports"])


def test_the_readme_starts_the_stack_with_one_command() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Run it in containers", 1)[1].split("\n## ", 1)[0]
    assert "docker compose up -d --build" in section
    assert "/readyz" in section and "http://localhost:8080" in section
