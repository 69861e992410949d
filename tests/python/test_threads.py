"""One compiled module called from several Python threads at once gives each call its own correct result."""

import threading

import torch

from conftest import case


def test_concurrent_calls_match_serial_ones(convnet):
    (x,), _ = case("tiny_convnet")
    torch.manual_seed(0)
    batches = [torch.randn_like(x) for _ in range(8)]
    expected = [convnet(b) for b in batches]
    results, errors = {}, []

    def worker(t):
        try:
            for round_ in range(3):
                for i in range(t, len(batches), 4):
                    results[(t, round_, i)] = convnet(batches[i])
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert len(results) == 3 * len(batches)
    for (_, _, i), out in results.items():
        assert all(torch.equal(a, b) for a, b in zip(out, expected[i]))
