"""Calling a compiled module as the original was called: pytrees (positional, keyword, nested containers in and
out), integer inputs, devices, and call errors."""

import pytest
import torch

import kiln
from conftest import assert_matches, case, data_path, rewrite_call_spec

LEAF = {"type": None, "context": None, "children_spec": []}


def node(type_name, children, context="null"):
    return {"type": type_name, "context": context, "children_spec": children}


@pytest.fixture(scope="session")
def bert_kwargs(workdir):
    """The small BERT fixture (two int64 inputs) as if exported from forward(**inputs) returning
    {"hidden": [last_hidden_state]}."""
    path = workdir + "/bert_kwargs.pt2"
    in_spec = [1, node("builtins.tuple", [node("builtins.tuple", []),
                                          node("builtins.dict", [LEAF, LEAF], '["input_ids", "attention_mask"]')])]
    out_spec = [1, node("builtins.dict", [node("builtins.list", [LEAF])], '["hidden"]')]
    rewrite_call_spec(data_path("models", "bert", "model.pt2"), path, in_spec, out_spec)
    return kiln.compile(path)


def test_keyword_inputs_in_any_order_and_structured_outputs(bert_kwargs):
    (ids, mask), (expected,) = case("models/bert")
    out = bert_kwargs(input_ids=ids, attention_mask=mask)
    assert isinstance(out, dict) and list(out) == ["hidden"] and isinstance(out["hidden"], list)
    # Transformer encoder in fp32 against torch's eager output: atol 1e-3 over 2 layers of softmax and layer norm.
    assert_matches(out["hidden"][0], expected, rtol=1e-3, atol=1e-3)
    again = bert_kwargs(attention_mask=mask, input_ids=ids)
    assert torch.equal(again["hidden"][0], out["hidden"][0])


def test_wrong_structure_names_what_was_expected(bert_kwargs):
    (ids, mask), _ = case("models/bert")
    with pytest.raises(kiln.KilnError, match=r"expected keys \['attention_mask', 'input_ids'\]"):
        bert_kwargs(input_ids=ids)
    with pytest.raises(kiln.KilnError, match=r"expected a sequence of 0"):
        bert_kwargs(ids, attention_mask=mask)


def test_nested_positional_inputs(workdir):
    path = workdir + "/mlp_nested.pt2"
    in_spec = [1, node("builtins.tuple", [node("builtins.tuple", [node("builtins.list", [LEAF])]),
                                          node("builtins.dict", [], "[]")])]
    out_spec = [1, node("builtins.tuple", [LEAF])]
    rewrite_call_spec(data_path("tiny_mlp", "model.pt2"), path, in_spec, out_spec)
    km = kiln.compile(path)
    (x,), (expected,) = case("tiny_mlp")
    out = km([x])
    assert isinstance(out, tuple) and len(out) == 1
    assert_matches(out[0], expected)


def test_integer_inputs_and_wrong_dtypes(bert_kwargs):
    (ids, mask), _ = case("models/bert")
    with pytest.raises(kiln.KilnError, match=r"^\[InvalidInput\].*(dtype|i64|f32)"):
        bert_kwargs(input_ids=ids.to(torch.int32), attention_mask=mask)
    with pytest.raises(kiln.KilnError, match=r"expected a tensor or int, got str"):
        bert_kwargs(input_ids="ids", attention_mask=mask)


def test_float_dtypes_are_checked(mlp):
    (x,), _ = case("tiny_mlp")
    with pytest.raises(kiln.KilnError, match=r"^\[InvalidInput\]"):
        mlp(x.double())
    with pytest.raises(kiln.KilnError, match=r"^\[InvalidInput\]"):
        mlp(x[:, :5])


def test_non_contiguous_inputs_give_the_same_result(mlp):
    (x,), (expected,) = case("tiny_mlp")
    strided = torch.cat([x, x], dim=1)[:, ::2]
    strided.copy_(x)
    assert not strided.is_contiguous()
    assert_matches(mlp(strided), expected)


def test_outputs_are_on_the_module_device_and_fresh(mlp):
    (x,), _ = case("tiny_mlp")
    a, b = mlp(x), mlp(x)
    assert a.device == mlp.device == torch.device("cpu")
    assert a.data_ptr() != b.data_ptr() and torch.equal(a, b)
