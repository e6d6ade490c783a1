"""`grad(loss, wrt=(w, b))` given the parameters' values instead of their names or positions:
a ShaxTypeError saying to name them (`wrt=("w", "b")`) or use `argnums`, at the user's line."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import shax
import shax.numpy as snp

W, B = np.ones(3, np.float32), np.float32(0.5)


def loss(w: Any, b: Any) -> Any:
    return snp.sum(w * b)


def test_values_in_wrt_say_to_name_them() -> None:
    with pytest.raises(shax.ShaxTypeError) as info:
        shax.grad(loss, wrt=(W, B))
    message = str(info.value)
    assert message.startswith("grad: wrt takes the parameters' names or positions, not their values")
    assert "(got f32[3], f32[])" in message
    assert "wrt=('w', 'b')" in message and "argnums=(0, 1)" in message and "test_wrt_values.py" in message


def test_one_value_and_argnums() -> None:
    with pytest.raises(shax.ShaxTypeError, match=r"grad: wrt .* \(got f32\[3\]\): name them \(wrt='w'\)"):
        shax.grad(loss, wrt=W)
    with pytest.raises(shax.ShaxTypeError, match=r"value_and_grad: argnums takes .* not their values"):
        shax.value_and_grad(loss, argnums=[W])


def test_names_and_positions_still_work() -> None:
    by_name = shax.grad(loss, wrt=("w", "b"))(W, B)
    by_position = shax.grad(loss, argnums=(0, 1))(W, B)
    np.testing.assert_array_equal(by_name[0], by_position[0])
    np.testing.assert_array_equal(by_name[0], np.full(3, 0.5, np.float32))
    assert by_name[1] == by_position[1] == np.float32(3.0)
