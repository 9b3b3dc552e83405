"""retry_forever: tenacity's exponential backoff with jitter, until success or stop."""

from logsig.backoff import retry_forever


class Attempts:
    """An action failing ``failures`` times with OSError, then succeeding."""

    def __init__(self, failures: int) -> None:
        self.failures, self.calls = failures, 0

    async def __call__(self) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise OSError(f"down {self.calls}")


class TestRetryForever:
    async def test_retries_until_success_with_growing_delays(self) -> None:
        """Three failures, three sleeps, each within its exponential step plus at most 0.5 s of jitter."""
        action, sleeps, errors = Attempts(3), [], []

        async def sleep(seconds: float) -> None:
            sleeps.append(seconds)
        ok = await retry_forever(action, "connecting", 30.0, lambda: False, sleep, errors.append)
        assert (True, 4, ["down 1", "down 2", "down 3"]) == (ok, action.calls, [str(e) for e in errors])
        assert [True, True, True] == [low <= s <= low + 0.5 for s, low in zip(sleeps, (0.5, 1.0, 2.0), strict=True)]

    async def test_delays_are_capped(self) -> None:
        """No delay exceeds the maximum."""
        sleeps: list[float] = []

        async def sleep(seconds: float) -> None:
            sleeps.append(seconds)
        await retry_forever(Attempts(12), "connecting", 2.0, lambda: False, sleep)
        assert (12, True) == (len(sleeps), max(sleeps) <= 2.0)

    async def test_stopping_ends_it_without_success(self) -> None:
        """Once stopping, it returns False and runs the action no more."""
        action, stopping = Attempts(100), {"now": False}

        async def sleep(_: float) -> None:
            stopping["now"] = True
        assert (False, 1) == (await retry_forever(action, "connecting", 1.0, lambda: stopping["now"], sleep),
                              action.calls)
