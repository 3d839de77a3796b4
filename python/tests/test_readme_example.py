"""The README's Python example, run as written (the marked region is what the README quotes:
examples/check_readme_snippets.cmake fails when the two differ)."""

import numpy


def test_readme_example(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    numpy.save("scores.npy", (numpy.arange(100_000) % 1000).astype(numpy.float32))
    # [readme:python_quickstart]
    import numpy as np
    import dpselect

    context = dpselect.Context()                     # keyed from the OS: for real data
    context.charge_to(dpselect.PrivacyAccountant(dpselect.PrivacyBound(epsilon=2.0)))
    scores = np.load("scores.npy")                   # float32 or float64, any size
    pick = dpselect.select(context, scores, epsilon=1.0, sensitivity=1.0)
    top = dpselect.select_top_k(context, scores, 10, epsilon=0.1, sensitivity=1.0)  # 0.1 per pick
    print(pick.index, top.indices, pick.report)
    # [/readme:python_quickstart]
    assert pick.report.candidates == scores.size
    assert len(top.indices) == 10
    assert context.accountant.release_count == 11
