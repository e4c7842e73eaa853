"""all-MiniLM-L6-v2 (examples/minilm): tokenizer, the NumPy reference against sentence-transformers
(skipped, with the reason, when torch or sentence-transformers is missing), and the model
computed by pyasc kernels against the reference."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from examples.minilm import reference, torch_reference  # noqa: E402
from examples.minilm import weights as W  # noqa: E402
from examples.minilm.model import PyAscMiniLM  # noqa: E402

CLS, SEP, PAD = 101, 102, 0


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity in float64."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (a * b).sum(-1) / np.linalg.norm(a, axis=-1) / np.linalg.norm(b, axis=-1)


@pytest.fixture(scope="module")
def params() -> W.EncoderParams:
    try:
        return W.load_params()
    except W.ModelDataMissing as exc:  # the CI script installs it
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def tokens(params: W.EncoderParams) -> W.Tokens:
    return W.tokenize(W.SENTENCES)


@pytest.fixture(scope="module")
def ref_embeddings(params: W.EncoderParams, tokens: W.Tokens) -> np.ndarray:
    return reference.encode(params, tokens)


# --------------------------------------------------------------------------- weights, tokenizer


def test_params(params: W.EncoderParams) -> None:
    cfg = params.config
    assert (cfg.hidden, cfg.heads, cfg.head_dim, cfg.layers, cfg.intermediate) == (
        384,
        12,
        32,
        6,
        1536,
    )
    assert cfg.eps == 1e-12 and cfg.max_seq_length == 256
    assert len(params.layers) == 6
    lp = params.layers[5]
    assert lp.q_w.shape == lp.o_w.shape == (384, 384)
    assert lp.ffn1_w.shape == (1536, 384) and lp.ffn2_w.shape == (384, 1536)
    assert lp.ffn1_b.shape == (1536,) and lp.ln2_b.shape == (384,)
    assert params.word.shape == (30522, 384) and params.token_type.shape == (2, 384)
    assert all(a.dtype == np.float32 for a in (params.word, lp.q_w, lp.ln2_w))
    half = lp.astype(np.float16)
    assert half.ffn1_w.dtype == np.float16
    np.testing.assert_allclose(half.ffn1_w, lp.ffn1_w, rtol=1e-3, atol=1e-7)


def test_tokenize(tokens: W.Tokens) -> None:
    b, s = tokens.shape
    lengths = tokens.attention_mask.sum(1)
    assert b == len(W.SENTENCES) >= 8
    assert len(set(lengths.tolist())) >= 8, "sentences of different lengths"
    assert lengths.max() == s, "padded to the longest in the batch"
    assert all(
        a.dtype == np.int64
        for a in (tokens.input_ids, tokens.attention_mask, tokens.token_type_ids)
    )
    assert (tokens.input_ids[:, 0] == CLS).all()
    for row, n in zip(tokens.input_ids, lengths, strict=True):
        assert row[n - 1] == SEP and (row[n:] == PAD).all()
    assert (tokens.token_type_ids == 0).all()
    assert ((tokens.attention_mask == 0) == (tokens.input_ids == PAD)).all()
    # "Hello world." -> [CLS] hello world . [SEP]
    assert tokens.input_ids[0, :5].tolist() == [CLS, 7592, 2088, 1012, SEP]


def test_tokenize_truncates() -> None:
    t = W.tokenize(["one two three four five six seven eight nine ten", "hi"], max_length=6)
    assert t.shape == (2, 6)
    assert t.input_ids[0, -1] == SEP and t.attention_mask[0].sum() == 6
    assert t.attention_mask[1].sum() == 3
    with pytest.raises(ValueError, match="outside"):
        W.tokenize(["x"], max_length=513)
    with pytest.raises(ValueError, match="at least one"):
        W.tokenize([])


# --------------------------------------------------------------------------- NumPy reference


def test_reference_properties(
    params: W.EncoderParams, tokens: W.Tokens, ref_embeddings: np.ndarray
) -> None:
    e = ref_embeddings
    assert e.shape == (len(W.SENTENCES), 384) and e.dtype == np.float32
    assert np.isfinite(e).all()
    np.testing.assert_allclose(np.linalg.norm(e.astype(np.float64), axis=1), 1.0, atol=1e-6)
    np.testing.assert_array_equal(reference.encode(params, tokens), e)  # deterministic
    # Padding must not change a sentence's embedding: encode the shortest one alone.
    i = int(tokens.attention_mask.sum(1).argmin())
    alone = reference.encode(params, W.tokenize([W.SENTENCES[i]]))
    assert cosine(alone, e[i : i + 1])[0] >= 0.99999
    # Distinct sentences give distinct embeddings; the two cat/kitten sentences are the
    # closest pair among the others.
    sim = e @ e.T
    np.fill_diagonal(sim, -1.0)
    assert sim.max() < 0.99
    cat, kitten = W.SENTENCES.index("The cat sat on the mat."), len(W.SENTENCES) - 1
    assert int(sim[cat].argmax()) == kitten


def test_reference_layer_norm_and_gelu() -> None:
    x = np.array([[1.0, 2.0, 3.0, 4.0]], np.float32)
    y = reference.layer_norm(x, np.ones(4, np.float32), np.zeros(4, np.float32), 1e-12)
    np.testing.assert_allclose(y, [[-1.3416408, -0.4472136, 0.4472136, 1.3416408]], rtol=1e-6)
    g = reference.gelu_erf(np.array([-3.0, -1.0, 0.0, 1.0, 3.0], np.float32))
    # 0.5 x (1 + erf(x / sqrt 2)) to 8 digits
    np.testing.assert_allclose(
        g, [-0.00404970, -0.15865525, 0.0, 0.84134475, 2.99595030], rtol=1e-6, atol=1e-8
    )


def test_reference_matches_sentence_transformers(
    tokens: W.Tokens, ref_embeddings: np.ndarray
) -> None:
    ok, why = torch_reference.available()
    if not ok:
        print(f"SKIP: PyTorch reference unavailable: {why}")
        pytest.skip(f"PyTorch reference unavailable: {why}")
    theirs = torch_reference.tokenize(W.SENTENCES)
    np.testing.assert_array_equal(theirs.input_ids, tokens.input_ids)
    np.testing.assert_array_equal(theirs.attention_mask, tokens.attention_mask)
    np.testing.assert_array_equal(theirs.token_type_ids, tokens.token_type_ids)
    torch_e = torch_reference.encode(W.SENTENCES)
    cos = cosine(ref_embeddings, torch_e)
    assert cos.min() >= 0.99999, cos
    np.testing.assert_allclose(ref_embeddings, torch_e, atol=2e-6)


# --------------------------------------------------------------------------- pyasc model

ROLES_PER_PASS = {
    "embed_layernorm": 1,
    "qkv_proj": 6,
    "attn_probs": 6,
    "context": 6,
    "o_proj": 6,
    "attn_layernorm": 6,
    "ffn_up": 6,
    "ffn_down": 6,
    "ffn_layernorm": 6,
    "pool_normalize": 1,
}


def test_model_rejects_bad_options(params: W.EncoderParams) -> None:
    with pytest.raises(ValueError, match="'float32', 'float16' or 'bfloat16', got 'int8'"):
        PyAscMiniLM(params, "int8")
    with pytest.raises(ValueError, match="backend"):
        PyAscMiniLM(params, "float32", backend="gpu")
    long = W.Tokens(*(np.zeros((1, 513), np.int64),) * 3)
    with pytest.raises(ValueError, match="513 exceeds the 512 position embeddings"):
        PyAscMiniLM(params).encode(long)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("dtype", "bound"), [("float32", 0.9999), ("float16", 0.999), ("bfloat16", 0.999)]
)
def test_pyasc_model_matches_reference(
    params: W.EncoderParams, tokens: W.Tokens, ref_embeddings: np.ndarray, dtype: str, bound: float
) -> None:
    model = PyAscMiniLM(params, dtype)
    t0 = time.perf_counter()
    e = model.encode(tokens)
    first = time.perf_counter() - t0
    assert e.shape == ref_embeddings.shape and e.dtype == np.dtype(dtype)
    cos = cosine(e, ref_embeddings)
    print(
        f"\n{dtype}: cosine to the reference min {cos.min():.7f}, first pass {first:.1f} s "
        "(compiles unless cached)"
    )
    assert cos.min() >= bound, cos
    # bfloat16 keeps 8 significant bits (float16 11): its tolerances are the fp16 ones x 8e-3/1e-3
    norm_tol, sim_tol = {"float32": (1e-5, 2e-4), "float16": (2e-3, 2e-3)}.get(dtype, (8e-3, 8e-3))
    np.testing.assert_allclose(np.linalg.norm(e.astype(np.float64), axis=1), 1.0, atol=norm_tol)
    # The sentence-similarity matrix (what the demo shows) agrees with the reference's.
    sim = e.astype(np.float64) @ e.astype(np.float64).T
    ref_sim = ref_embeddings.astype(np.float64) @ ref_embeddings.astype(np.float64).T
    np.testing.assert_allclose(sim, ref_sim, atol=sim_tol)
    # Every role ran as often as the architecture says, through compiled kernels.
    assert {r: s.calls for r, s in model.stats.items()} == ROLES_PER_PASS
    for st in model.stats.values():  # head split/merge fold into the Cube kernels' addressing
        assert st.kernels == 1 and st.fused_ops >= 2 and st.gm_bytes > 0, st
    itemsize = np.dtype(dtype).itemsize
    b, s = tokens.shape
    qkv = model.stats["qkv_proj"]  # x, the [3, H, H] weight and bias read, [3, B, S, H] written
    assert qkv.gm_bytes == itemsize * (b * s * 384 + 3 * 384 * 384 + 3 * 384 + 3 * b * s * 384)
    print(model.kernel_table())
    t0 = time.perf_counter()
    np.testing.assert_array_equal(model.encode(tokens), e)  # deterministic, all cached
    print(f"{dtype}: cached pass {time.perf_counter() - t0:.2f} s")


@pytest.mark.slow
def test_interpreter_backend_agrees_with_cpu_build(params: W.EncoderParams) -> None:
    """The same operators run by the IR interpreter give the CPU build's embeddings."""
    tokens = W.tokenize(["Hi", "The cat sat."])  # padding in row 0
    cpu = PyAscMiniLM(params, "float32").encode(tokens)
    interp = PyAscMiniLM(params, "float32", backend="interp").encode(tokens)
    np.testing.assert_allclose(interp, cpu, atol=2e-6)
    assert cosine(interp, reference.encode(params, tokens)).min() >= 0.9999
