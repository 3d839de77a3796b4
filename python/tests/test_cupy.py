# SPDX-License-Identifier: Apache-2.0
"""Device arrays through DLPack (CuPy, PyTorch CUDA): skipped without the package or a GPU."""

import numpy as np
import pytest

import dpselect


def test_cupy_device_arrays_equal_the_host_path():
    cupy = pytest.importorskip("cupy")
    if not dpselect.gpu_usable():
        pytest.skip("no usable GPU")
    host = (np.arange(1 << 20) % 97).astype(np.float32) / 8
    device = cupy.asarray(host)
    for mechanism in dpselect.Mechanism:
        on_gpu = dpselect.select(dpselect.Context.fixed_seed(11), device, epsilon=1.0, sensitivity=1.0,
                                 mechanism=mechanism)
        on_cpu = dpselect.select(dpselect.Context.fixed_seed(11), host, epsilon=1.0, sensitivity=1.0,
                                 mechanism=mechanism, backend=dpselect.Backend.CPU)
        assert on_gpu.index == on_cpu.index
        assert on_gpu.report.executed_on == dpselect.ExecutedOn.GPU


def test_torch_cuda_tensors_equal_the_host_path():
    torch = pytest.importorskip("torch")
    if not (torch.cuda.is_available() and dpselect.gpu_usable()):
        pytest.skip("no usable GPU")
    host = (np.arange(1 << 20) % 97).astype(np.float64) / 8
    device = torch.from_numpy(host).cuda()
    on_gpu = dpselect.select_top_k(dpselect.Context.fixed_seed(5), device, 10, epsilon=0.2, sensitivity=1.0)
    on_cpu = dpselect.select_top_k(dpselect.Context.fixed_seed(5), host, 10, epsilon=0.2, sensitivity=1.0,
                                   backend=dpselect.Backend.CPU)
    assert list(on_gpu.indices) == list(on_cpu.indices)


def test_cupy_rows_with_an_epsilon_per_row_equal_the_host_path():
    cupy = pytest.importorskip("cupy")
    if not dpselect.gpu_usable():
        pytest.skip("no usable GPU")
    host = (np.arange(32 * 4096) % 89).astype(np.float32).reshape(32, 4096) / 8
    epsilons = np.linspace(0.25, 2.0, 32)
    stream = cupy.cuda.Stream(non_blocking=True)
    on_gpu = dpselect.select_rows(dpselect.Context.fixed_seed(13), cupy.asarray(host), epsilon=epsilons,
                                  sensitivity=1.0, stream=stream.ptr)
    on_cpu = dpselect.select_rows(dpselect.Context.fixed_seed(13), host, epsilon=epsilons, sensitivity=1.0,
                                  backend=dpselect.Backend.CPU)
    assert list(on_gpu.indices) == list(on_cpu.indices)
    assert on_gpu.reports[0].executed_on == dpselect.ExecutedOn.GPU
