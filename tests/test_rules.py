"""Every case of every primitive through every rule check (see harness.py)."""

import pytest
from cases import CASES
from harness import (
    check_against_mlx,
    check_jvp_fd,
    check_second_order,
    check_vjp_dot,
    check_vmap,
    to_mx,
)
from hypothesis import given
from hypothesis import strategies as st


def _ids(cases):
    return [c.name for c in cases]


FD_CASES = [c for c in CASES if c.fd]


@pytest.mark.parametrize("case", FD_CASES, ids=_ids(FD_CASES))
@given(data=st.data())
def test_jvp_matches_finite_differences(case, data):
    args = to_mx(data.draw(case.args))
    check_jvp_fd(case.fn, args, rtol=case.rtol, atol=case.atol, eps=case.eps)


VJP_CASES = [c for c in CASES if c.vjp]


@pytest.mark.parametrize("case", VJP_CASES, ids=_ids(VJP_CASES))
@given(data=st.data())
def test_vjp_is_transpose_of_jvp(case, data):
    args = to_mx(data.draw(case.args))
    check_vjp_dot(case.fn, args, rtol=case.rtol, atol=case.atol)


MLX_CASES = [c for c in CASES if c.mlx_fn is not None and c.vjp]


@pytest.mark.parametrize("case", MLX_CASES, ids=_ids(MLX_CASES))
@given(data=st.data())
def test_agrees_with_mlx_autodiff(case, data):
    check_against_mlx(case.fn, case.mlx_fn, data.draw(case.args))


SECOND_ORDER = [c for c in CASES if c.second_order and c.fd and c.vjp]


@pytest.mark.parametrize("case", SECOND_ORDER, ids=_ids(SECOND_ORDER))
@given(data=st.data())
def test_second_order(case, data):
    args = to_mx(data.draw(case.args))
    check_second_order(case.fn, args, rtol=case.rtol, atol=case.atol, eps=case.eps)


@pytest.mark.parametrize("case", CASES, ids=_ids(CASES))
@given(data=st.data())
def test_vmap_matches_loop(case, data):
    # The seed picks the in/out batch axes.
    check_vmap(case.fn, to_mx(data.draw(case.args)), size=data.draw(st.integers(1, 4)),
               seed=data.draw(st.integers(0, 2**16)))

