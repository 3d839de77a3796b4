# SPDX-License-Identifier: Apache-2.0
"""The Python examples of the README and of docs/python.md, run as written (the marked regions
are what the documents quote: examples/check_doc_snippets.cmake fails when the two differ)."""


def test_readme_hello():
    # [doc:python_hello]
    import numpy as np
    import dpselect

    scores = np.random.default_rng(0).normal(size=1_000_000)  # one utility per candidate
    context = dpselect.Context()                               # a secret key from the operating system
    pick = dpselect.select(context, scores, epsilon=1.0, sensitivity=1.0)
    print(pick.index, pick.report.epsilon_spent, pick.report.executed_on)
    # [/doc:python_hello]
    assert 0 <= pick.index < scores.size
    assert pick.report.candidates == scores.size


def test_python_guide_quickstart():
    # [doc:python_quickstart]
    import numpy as np
    import dpselect

    context = dpselect.Context()                     # keyed from the OS: for real data
    context.charge_to(dpselect.PrivacyAccountant(dpselect.PrivacyBound(epsilon=2.0)))
    scores = (np.arange(100_000) % 1000).astype(np.float32)   # float32 or float64, any size
    pick = dpselect.select(context, scores, epsilon=1.0, sensitivity=1.0)
    top = dpselect.select_top_k(context, scores, 10, epsilon=1.0, sensitivity=1.0)  # the 10 picks: 0.1 each
    print(pick.index, top.indices, pick.report)
    # [/doc:python_quickstart]
    assert pick.report.candidates == scores.size
    assert len(top.indices) == 10
    assert context.accountant.release_count == 11


def test_python_guide_labels_and_rows():
    # [doc:python_labels]
    import numpy as np
    import dpselect

    context = dpselect.Context()
    fruit = ["apple", "banana", "cherry", "damson"]   # public: the candidates themselves
    votes = [12, 40, 7, 38]                            # a list of ints: converted once to float64
    pick = dpselect.select(context, votes, epsilon=1.0, sensitivity=1.0, labels=fruit)
    rows = dpselect.select_rows(context, [[1, 9, 3, 2], [8, 0, 0, 1]], epsilon=0.5, sensitivity=1.0,
                                labels=np.array(fruit))
    print(pick.index, pick.label, rows.indices, rows.labels)   # rows.indices: a NumPy int64 array
    # [/doc:python_labels]
    assert pick.label == fruit[pick.index]
    assert isinstance(rows.indices, np.ndarray) and rows.indices.dtype == np.int64 and rows.indices.shape == (2,)
    assert rows.labels.tolist() == [fruit[i] for i in rows.indices]


def test_python_guide_tour(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # [doc:python_tour]
    import numpy as np
    import dpselect
    import dpselect.audit
    import dpselect.plot

    context = dpselect.Context()
    accountant = dpselect.PrivacyAccountant(dpselect.PrivacyBound(epsilon=3.0, delta=1e-6))
    context.charge_to(accountant)

    rng = np.random.default_rng(5)
    bids = dpselect.Bids(rng.lognormal(3.0, 0.6, 5000))   # validated and sorted once
    grid = dpselect.PriceGrid(0.01, 200.0, 0.01)
    price = dpselect.select_price(context, bids, grid, epsilon=1.0)          # add/remove one bidder
    dpselect.plot.pricing(bids, grid, 1.0, released=price).savefig("pricing.png")  # NOT PRIVATE

    answers = np.arange(1000, dtype=np.float64)     # f_1(D), f_2(D), ...: sensitivity 1 each
    above = dpselect.sparse_vector_batch(context, answers, epsilon=1.0, sensitivity=1.0,
                                         threshold=500.0, max_positives=3)
    counts = np.array([120.0, 4.0, 37.0])
    dpselect.add_secure_noise(context, counts, epsilon=0.5, sensitivity=1.0)  # in place, on a grid

    print(price.price, [a.index for a in above.above], counts, accountant.spent())
    dpselect.plot.accounting(0.1, 10_000, 1e-6).savefig("accounting.png")
    result = dpselect.audit.run(dpselect.audit.library_targets()[0], runs=50_000)
    print(result.passed, result.bounds.epsilon_lower)
    # [/doc:python_tour]
    assert accountant.release_count == 3
    assert 0.01 <= price.price <= 200.0
    assert (tmp_path / "pricing.png").stat().st_size > 0 and (tmp_path / "accounting.png").stat().st_size > 0
    assert result.passed


def test_sharded_releases_guide():
    # [doc:python_sharding]
    import numpy as np
    import dpselect

    context = dpselect.Context()                                              # on the driver
    scores = np.random.default_rng(1).random(1_000_000)
    release = dpselect.begin_release(context, epsilon=1.0, sensitivity=1.0)  # validated, charged once
    ticket = release.ticket(len(scores), first_utility=scores[0])            # candidates [0, n); it pickles

    # on each worker, for its slice (a NumPy array, a CuPy or PyTorch tensor) and its first index:
    shards = [ticket.evaluate(scores[i:i + 250_000], i) for i in range(0, len(scores), 250_000)]

    # back on the driver, with every worker's result (any order, any grouping):
    pick = release.finish(dpselect.merge(*shards))
    # [/doc:python_sharding]
    assert pick.report.candidates == len(scores)
