"""An MLP over an embedding lookup, trained on minibatches of token sequences.

The synthetic task: 24 tokens fall into 3 hidden groups (token t into group t mod 3); a
sequence of 5 tokens is labelled with the group most of its tokens belong to. The model
embeds each token (`params["embed"][tokens]`: integer indexing, a `gather` whose gradient
is a `scatter_add` into the rows the batch used), averages the sequence's embeddings,
and classifies the average with a one-hidden-layer MLP. One compiled function computes
the loss and its gradient for any minibatch (the tokens are an argument, so one program
serves them all); Adam's update is a few lines of numpy.

    python examples/embedding_mlp.py
"""

from typing import Any

import numpy as np

import shax
import shax.numpy as snp
from shax import nn

VOCAB, GROUPS, LENGTH, WIDTH, HIDDEN = 24, 3, 5, 8, 16


def data(sequences: int = 600, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(tokens i32[n, 5], labels i32[n]): three tokens of the label's group, two of any."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, GROUPS, sequences)
    own = labels[:, None] + GROUPS * rng.integers(0, VOCAB // GROUPS, (sequences, 3))
    tokens = rng.permuted(np.concatenate([own, rng.integers(0, VOCAB, (sequences, 2))], axis=1), axis=1)
    return tokens.astype(np.int32), labels.astype(np.int32)


def init(seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def normal(*shape: int) -> np.ndarray:
        return (rng.normal(size=shape) / np.sqrt(shape[0])).astype(np.float32)

    return {
        "embed": normal(VOCAB, WIDTH),
        "w1": normal(WIDTH, HIDDEN),
        "b1": np.zeros(HIDDEN, np.float32),
        "w2": normal(HIDDEN, GROUPS),
        "b2": np.zeros(GROUPS, np.float32),
    }


def logits(params: Any, tokens: Any) -> Any:
    pooled = snp.mean(params["embed"][tokens], axis=1)  # [batch, 5, WIDTH] -> [batch, WIDTH]
    hidden = snp.tanh(pooled @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


def loss(params: Any, tokens: Any, labels: Any) -> Any:
    """The mean cross-entropy of the batch's labels."""
    log_p = nn.log_softmax(logits(params, tokens), axis=1)
    return -snp.mean(snp.take_along_axis(log_p, labels[:, None], axis=1))


def main(epochs: int = 30, batch: int = 50, lr: float = 0.03, log: Any = print) -> tuple[float, float]:
    """Train with Adam on minibatches; returns (final training loss, held-out accuracy)."""
    tokens, labels = data()
    test_tokens, test_labels = data(300, seed=2)
    params = init()
    step = shax.jit(shax.value_and_grad(loss, wrt=0))
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(p) for k, p in params.items()}
    t = 0
    for epoch in range(epochs):
        for start in range(0, len(tokens), batch):
            value, grads = step(params, tokens[start : start + batch], labels[start : start + batch])
            t += 1
            for k, g in grads.items():  # Adam: moving averages of g and g², bias-corrected
                m[k] = 0.9 * m[k] + 0.1 * g
                v[k] = 0.999 * v[k] + 0.001 * g * g
                params[k] = params[k] - lr * (m[k] / (1 - 0.9**t)) / (np.sqrt(v[k] / (1 - 0.999**t)) + 1e-8)
        if log is not None and (epoch + 1) % 10 == 0:
            log(f"epoch {epoch + 1}: loss {float(value):.4f}")
    accuracy = float(np.mean(np.argmax(logits(params, test_tokens), axis=1) == test_labels))
    if log is not None:
        log(f"held-out accuracy {accuracy:.1%}")
    return float(loss(params, tokens, labels)), accuracy


if __name__ == "__main__":
    main()
