"""Worlds of ranks (ave.World): a communicating kernel (the all-gather + GEMM that `overlap`
makes from a local kernel) launched on every rank at once, each rank's copy of the symmetric
buffer written and read from Python; on the interpreter and on simulated devices."""
import os

import numpy as np
import pytest

import ave

from conftest import ROOT

LOCAL = os.path.join(ROOT, "test", "passes", "overlap", "Inputs", "ag_local.ave")


def _kernel(tmp_path, world, template, target):
    src = open(LOCAL).read().replace("WORLD", str(world)).replace(
        "ROWS", str(64 * world)).replace("TEMPLATE", template)
    path = tmp_path / ("ag%d.ave" % world)
    path.write_text(src)
    return ave.compile(str(path), target=target)


@pytest.mark.parametrize("target,world,template", [
    ("host", 2, "ring"), ("host", 4, "swizzle1d"), ("sim-sm_90a", 2, "ring"),
    ("sim-gfx942", 4, "ring")])
def test_all_gather_gemm_on_a_world(tmp_path, target, world, template):
    k = _kernel(tmp_path, world, template, target)
    w = ave.World(world, device=target)
    assert w.size == world
    rng = np.random.default_rng(world)
    own = [rng.standard_normal((64, 32)).astype(np.float32) for _ in range(world)]
    for r in range(world):
        a = np.full((64 * world, 32), 1e6, np.float32)  # the other chunks: noise to overwrite
        a[64 * r:64 * r + 64] = own[r]
        w.write(k, "@A_full", r, a)
    B = rng.standard_normal((32, 32)).astype(np.float32)
    full = np.concatenate(own)
    for launch in range(2):  # a second launch needs no reset: the next epoch
        C = [np.zeros((64 * world, 32), np.float32) for _ in range(world)]
        w.launch(k, 2 * world, [[B, C[r]] for r in range(world)])
        for r in range(world):
            np.testing.assert_array_equal(w.read(k, "@A_full", r), full)
            np.testing.assert_allclose(C[r], full @ B.T, rtol=1e-5, atol=1e-5)
    # Each rank's signal counters: every other rank's chunk signalled once per launch.
    for r in range(world):
        sig = w.read(k, "sig", r)
        assert [int(x) for x in sig] == [0 if c == r else 2 for c in range(world)]


def test_world_misuse(tmp_path):
    k = _kernel(tmp_path, 2, "ring", "host")
    w = ave.World(2)
    with pytest.raises(KeyError, match="no symmetric buffer '@nope'"):
        w.read(k, "@nope", 0)
    with pytest.raises(IndexError, match="rank 2 is not one of the world's 2"):
        w.read(k, "@A_full", 2)
    with pytest.raises(ValueError, match="has shape"):
        w.write(k, "@A_full", 0, np.zeros((3, 3), np.float32))
    with pytest.raises(TypeError, match="needs 2 argument lists"):
        w.launch(k, 4, [[]])
    with pytest.raises(TypeError, match="rank 1: kernel @ag_gemm takes 2 arguments"):
        w.launch(k, 4, [[np.zeros((32, 32), np.float32), np.zeros((128, 32), np.float32)], []])
    with pytest.raises(ave.DeviceError, match="a world has 1 to 64 ranks"):
        ave.World(0)
    # A plain launch is a world of one, which a module written for two ranks refuses.
    with pytest.raises(ave.LaunchError, match=r"is written for 2 ranks \('world = 2'\), the run has 1"):
        k[4](np.zeros((32, 32), np.float32), np.zeros((128, 32), np.float32))
    # On a simulated device a plain launch of a communicating kernel says to use a world.
    ks = _kernel(tmp_path, 2, "ring", "sim-gfx942")
    with pytest.raises(ave.LaunchError, match="launch it on a world of ranks"):
        ks[4](np.zeros((32, 32), np.float32), np.zeros((128, 32), np.float32))
