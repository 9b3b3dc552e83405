"""Checks of the Dockerfile and .dockerignore: hadolint, a pinned base, a non-root runtime stage
without build tools. The image itself is built by `docker build` / `buildah bud`, not here."""

from __future__ import annotations

import re

from tests.deploy.support import REPO, run_tool

DOCKERFILE = REPO / "Dockerfile"
PINNED_FROM = re.compile(r"^FROM [\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}( AS \w+)?$")


def instructions() -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` per Dockerfile instruction, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text(encoding="utf-8"))
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(maxsplit=1)[0].upper(), line.split(maxsplit=1)[1]) for line in lines]


def final_stage() -> list[tuple[str, str]]:
    """The instructions after the last FROM."""
    steps = instructions()
    last = max(i for i, (op, _) in enumerate(steps) if op == "FROM")
    return steps[last + 1:]


class TestDockerfile:
    def test_hadolint_finds_nothing(self, hadolint: str) -> None:
        """hadolint reports no rule violation."""
        result = run_tool(hadolint, str(DOCKERFILE))
        assert (0, "") == (result.returncode, result.stdout + result.stderr)

    def test_every_base_is_pinned_by_tag_and_digest(self) -> None:
        """Each FROM of a registry image names a tag and a sha256 digest."""
        froms = [f"FROM {args}" for op, args in instructions() if op == "FROM" and "--from" not in args]
        assert (2, []) == (len(froms), [line for line in froms if not PINNED_FROM.match(line)])

    def test_runtime_stage_runs_logsig_as_a_numeric_non_root_user(self) -> None:
        """The final stage switches to uid 10001 and starts `logsig run --config ...`."""
        stage = dict(final_stage())
        assert ("10001:10001", '["logsig"]', '["run", "--config", "/etc/logsig/logsig.yaml"]', "9464") == (
            stage["USER"], stage["ENTRYPOINT"], stage["CMD"], stage["EXPOSE"])

    def test_runtime_stage_installs_nothing(self) -> None:
        """The final stage copies the built environment; it runs no package manager or compiler."""
        runs = " ".join(args for op, args in final_stage() if op == "RUN")
        copies = [args for op, args in final_stage() if op == "COPY"]
        assert ([], ["--from=build /opt/logsig /opt/logsig",
                     "--from=build --chown=10001:10001 /var/cache/logsig /var/cache/logsig"]) == (
            re.findall(r"\b(apt-get|apk|pip|gcc|make)\b", runs), copies)

    def test_build_stage_warms_the_compile_cache_the_runtime_ships(self) -> None:
        """The build runs `logsig catalog warm` into the cache directory both stages name, which the runtime copies."""
        stages = " ".join(args for op, args in instructions() if op in ("ENV", "RUN"))
        runtime_env = " ".join(args for op, args in final_stage() if op == "ENV")
        assert (2, True, True) == (stages.count("LOGSIG_CATALOG__CACHE_DIR=/var/cache/logsig"),
                                   "logsig catalog warm" in stages,
                                   "LOGSIG_CATALOG__CACHE_DIR=/var/cache/logsig" in runtime_env)

    def test_build_context_copies_only_what_dockerignore_lets_through(self) -> None:
        """.dockerignore starts from nothing and lets exactly the COPY sources (which exist) through."""
        text = (REPO / ".dockerignore").read_text(encoding="utf-8")
        lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
        sources = [args.split()[0] for op, args in instructions() if op == "COPY" and "--from" not in args]
        allowed = {line[1:].rstrip("/") for line in lines if line.startswith("!")}
        assert ("*", set(sources), True) == (lines[0], allowed, all((REPO / s).exists() for s in sources))
