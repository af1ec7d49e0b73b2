"""The fleet recipe of docs/python.md: a folder of usage logs (one file per session, as Claude Code
and Codex write them) replayed across Dask worker processes gives exactly the single-process
totals."""

import functools
import os

import pytest

import pcsim

if os.environ.get("PCSIM_REQUIRE_OPTIONAL"):  # .ci/run sets it: there a missing Dask is a failure
    import distributed
else:
    distributed = pytest.importorskip("distributed", reason="the fleet test needs dask[distributed]")

SESSIONS = 12
MODEL = "claude-opus-4.8"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory, cli):
    """Twelve session logs written by `pcsim run --usage-log` (different seeds: different gaps and
    message sizes), in two sub-folders as two projects would be."""
    root = tmp_path_factory.mktemp("fleet")
    for k in range(1, SESSIONS + 1):
        folder = root / ("project-a" if k % 2 else "project-b")
        folder.mkdir(exist_ok=True)
        cli("run", "examples/explicit-vs-automatic.toml", "--model", MODEL, "--strategy", "cached",
            "--seed", str(k), "--usage-log", str(folder / f"session-{k:03}.jsonl"))
    return root


def _chunks(files, n):
    return [files[i::n] for i in range(n)]


def test_dask_partitioned_replay_equals_single_process_to_the_cent(fleet, cli_json):
    files = pcsim.log_files(fleet)
    assert len(files) == SESSIONS
    single = pcsim.replay(fleet, strategies=["cached", "none"])
    replay_part = functools.partial(pcsim.replay_files, strategies=["cached", "none"])
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        parts = client.gather(client.map(replay_part, _chunks(files, 4)))
        # Both worker processes did work (the partitions are not all replayed in one place).
        workers = set(client.run(lambda: __import__("os").getpid()).values())
    assert len(workers) == 2
    merged = pcsim.ReplayResult.merge(parts)
    assert merged.calls_logged == single.calls_logged == 12 * 30
    for got, want in zip(merged.results, single.results):
        assert (got.model, got.strategy, got.conversations, got.calls_total) == (
            want.model, want.strategy, want.conversations, want.calls_total)
        for side in ("logged", "predicted"):
            g, w = getattr(got, side), getattr(want, side)
            assert (g.uncached_tokens, g.cache_write_tokens, g.cache_read_tokens) == (
                w.uncached_tokens, w.cache_write_tokens, w.cache_read_tokens)
            assert round(g.cost_usd, 2) == round(w.cost_usd, 2)
            assert g.cost_usd == pytest.approx(w.cost_usd, rel=1e-12)
    # And the command's totals over the same folder.
    expected = cli_json("replay", str(fleet), "--strategy", "cached", "--strategy", "none")
    for got, want in zip(merged.results, expected["results"]):
        assert got.strategy == want["strategy"]
        assert round(got.predicted.cost_usd, 2) == round(want["predicted"]["cost_usd"], 2)
        assert got.predicted.cache_read_tokens == want["predicted"]["cache_read_tokens"]
        assert round(got.logged.cost_usd, 2) == round(want["logged"]["cost_usd"], 2)
