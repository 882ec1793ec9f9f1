"""The grammar of prose (mha_symbolic/check/prose.lark): for every rule, a sentence it reads and a sentence it
must not read, with the statements the reader returns (exact: names, values, operators)."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from mha_symbolic.check.prose import (
    AxisClaim,
    Condition,
    Constraint,
    HeadScope,
    LayerCount,
    MomentClaim,
    RankClaim,
    RatioClaim,
    Restatement,
    Setting,
    ShapeClaim,
    TokenScope,
    _pieces,
    _plain,
    concluded,
    hypothetical,
    read,
    variants,
)


def statements(sentence: str) -> list[tuple]:
    """The statements of one sentence, without offsets and texts: (kind, fields...)."""
    out: list[tuple] = []
    for _, s in read(_plain(sentence)):
        if isinstance(s, Setting):
            out.append(("set", s.name, s.value))
        elif isinstance(s, Constraint):
            out.append(("bound", s.name, s.op, s.value))
        elif isinstance(s, Condition):
            out.append(("if", dict(s.sizes)))
        elif isinstance(s, HeadScope):
            out.append(("head", s.head))
        elif isinstance(s, TokenScope):
            out.append(("token", s.token))
        elif isinstance(s, AxisClaim):
            out.append(("axis", s.axis, s.subject))
        elif isinstance(s, RankClaim):
            out.append(("rank", s.subject, s.op, s.value))
        elif isinstance(s, RatioClaim):
            out.append(("ratio", s.factor))
        elif isinstance(s, LayerCount):
            out.append(("layers", s.name, s.value))
        elif isinstance(s, MomentClaim):
            out.append(("moment", s.moment, s.scaled, s.value))
        elif isinstance(s, ShapeClaim):
            out.append(("shape", s.subject, s.dims))
        elif isinstance(s, Restatement):
            out.append(("restated", s.first, s.second))
    return out


#: rule -> (a sentence the rule reads, what is read; a sentence it must not read, what is read instead)
CASES = {
    "label_setting": ("The number of heads (h): 8, and the head dimension d_k = 64.",
                      [("set", "h", 8), ("set", "d_k", 64)],
                      "The model dimension 512 · 2 is the width after the MLP.", []),
    "colon_setting": ("Sizes -- h: 4; d_k: 16.", [("set", "h", 4), ("set", "d_k", 16)],
                      "For 4096 tokens: 512 MiB.", [("if", {"n": 4096})]),
    "is_setting": ("Here d_model is 6 and n was 4.", [("set", "d_model", 6), ("set", "n", 4)],
                   "Here d_model is 6.5 wide.", []),
    "chain": ("We use $d_k = d_v = 64$ and $1 \\le N \\le 10^4$.",
              [("set", "d_k", 64), ("set", "d_v", 64), ("bound", "N", "ge", 1), ("bound", "N", "le", 10000)],
              "so $d_k = d_{model}/h = 20 / 4 = 5$.", []),
    "counted": ("A two-head layer over 3 tokens with 8 key-value heads.",
                [("set", "h", 2), ("set", "n", 3), ("set", "g", 8)],
                "A layer with one heads-up display.", []),
    "named_count": ("Take $N = 5$ tokens, $n_q = 32$ parallel heads and $n_{kv} = 8$ shared key/value heads.",
                    [("set", "n", 5), ("set", "h", 32), ("set", "g", 8)],
                    "each K/V head is shared by $h/g = 4$ query heads.", []),
    "layer_count": ("A 32-layer decoder, $L = 32$; the encoder has $N = 6$ Schichten.",
                    [("layers", "L", 32), ("layers", "N", 6)],
                    "A 24-layer model, of which we keep $L = 12$.", []),
    "single_token": ("With only one token there is nothing to choose.", [("set", "n", 1)],
                     "The one token of interest is the third.", []),
    "single_head": ("The toy model uses only a single attention head.", [("set", "h", 1)],
                    "We look at one head of the eight.", []),
    "one_kv_head": ("All 8 query heads share a single key-value head.", [("set", "h", 8), ("set", "g", 1)],
                    "All heads share the same scaling.", []),
    "not_a_count": ("The first two heads attend to the start; the 4 query heads of a group share keys; 8 heads per "
                    "GPU; 24 GiB / 128 KiB = 196608 tokens fit.", [],
                    "The model has two heads.", [("set", "h", 2)]),
    "not_one_head": ("The output of one head of the layer is $n \\times d_k$.", [],
                     "A layer with one head.", [("set", "h", 1)]),
    "case_definition": ("Here $g = h$ is plain MHA, $1 < g < h$ is grouped-query attention and $g = 1$ is MQA.", [],
                        "We take $g = 1$, so this is multi-query attention.", [("set", "g", 1)]),
    "word_bound": ("It fits at most 10 heads and no fewer than 4 tokens.",
                   [("bound", "h", "le", 10), ("bound", "n", "ge", 4)],
                   "It fits at most 10 layers.", []),
    "between_bound": ("Use between 2 and 8 heads.", [("bound", "h", "ge", 2), ("bound", "h", "le", 8)],
                      "Use between 2 and 8 layers.", []),
    "name_bound": ("Here d_model must be at most 1024.", [("bound", "d_model", "le", 1024)],
                   "Here the width must be at most 1024.", []),
    "condition": ("Indeed, for $n = 3$, $d_k = 1$ the logits are small; with 32 query heads and 8 K/V heads it is 4.",
                  [("if", {"n": 3, "d_k": 1}), ("if", {"h": 32, "g": 8})],
                  "Take twelve heads and 8 tokens.", [("set", "h", 12), ("set", "n", 8)]),
    "head_scope": ("Für Kopf 2 and for the second head alike.", [("head", 2), ("head", 2)],
                   "The head 2 layers above.", []),
    "axis_claim": ("Each row of $A_1$ sums to one; every column of the attention weights is a probability vector.",
                   [("axis", "row", "A_1"), ("axis", "column", "the attention weights")],
                   "The columns of $A$ do not sum to one, and each row need not add up to 1.", []),
    "rank_claim": ("$S$ has rank 2, $W_Q W_K^\\top$ has rank at most $d_k = 64$, and $M$ is rank-deficient; each "
                   "score matrix has rank at most 16.",
                   [("rank", "S", "eq", "2"), ("rank", "W_Q W_K^T", "le", "64"), ("set", "d_k", 64),
                    ("rank", "M", "lt", "full"), ("rank", "Q_{i} K_{i}^{T}", "le", "16")],
                   "So the soldier has rank 2 in the army; the score matrix has rank 2 (a word subject: bounds only).",
                   []),
    "ratio_claim": ("It is 32 / 8 = 4 times smaller, a quarter of the MHA cache, 1/5 of it, by a factor of 2.5, "
                    "an eighth of MHA, a thirty-second of it, eight times less.",
                    [("ratio", "4"), ("ratio", "4"), ("ratio", "5"), ("ratio", "2.5"), ("ratio", "8"), ("ratio", "32"),
                     ("ratio", "8")],
                    "It takes 4 times as long and a quarter more.", []),
    "restatement": ("That is $786{,}432$ bytes, i.e. 768 KiB, or 20,480 bytes (≈ 20 KiB) per token; 16 MiB — 16777216 "
                    "bytes; 6 MiB, d.h. 6291456 Bytes.",
                    [("restated", "786432 bytes", "768 KiB"), ("restated", "20480 bytes", "20 KiB"),
                     ("restated", "16 MiB", "16777216 bytes"), ("restated", "6 MiB", "6291456 Bytes")],
                    "It needs 2 GiB or 4 GiB depending on the dtype, 160 MiB (320 MiB with fp32) and 4 GB (fp16).", []),
    "moment_claim": ("For $d_k = 64$ the unscaled score has variance 64 and standard deviation 8, while after "
                     "scaling, the logits have a standard deviation of 1; the variance of the dot product is 64; an "
                     "unscaled score would have standard deviation 8.",
                     [("if", {"d_k": 64}), ("moment", "Var", False, "64"), ("moment", "sd", False, "8"),
                      ("moment", "sd", True, "1"), ("moment", "Var", None, "64"), ("moment", "sd", False, "8")],
                     "The variance of the embeddings is 1 and the score function has 2 arguments.", []),
    "shape_claim": ("So $Q * K^\\top$ is $2 \\times 2$, $W_O$ is a 4 x 12 matrix, $Q_i K_i^T / \\sqrt{64}$ es de 6×6, "
                    "$M$ volta a ter forma $2 \\times 6$, $W^O$ must be $6 \\times 6$ and $Z$ has shape (2, 3, 5).",
                    [("shape", "Q * K^T", ("2", "2")), ("shape", "W_O", ("4", "12")),
                     ("shape", "Q_i K_i^T / \\sqrt{64}", ("6", "6")), ("shape", "M", ("2", "6")),
                     ("shape", "W^O", ("6", "6")), ("shape", "Z", ("2", "3", "5"))],
                    "The model is 2 x faster, and it is 3 by far the best.", []),
    "member_claim": ("Here QKᵀ ∈ ℝ^{2×2}, and K ∈ ℝ^(3×2).",
                     [("shape", "QK^T", ("2", "2")), ("shape", "K", ("3", "2"))],
                     "So every row of $A \\in \\mathbb{R}^{n \\times n}$ sums to one.",
                     [("axis", "row", "A ∈ \\mathbb{R}^{n * n}")]),
    "not_a_shape": ("QK^T is an n × d_k matrix times a d_k × n matrix, $A_1 V_1$ has shape (3, 3) × (3, 2), and the "
                    "entry of Concat · W_O is 1·1 + 0·0, and A V is (3, 3)(3, 2).", [],
                    "QK^T is an n × n matrix.", [("shape", "QK^T", ("n", "n"))]),
    "token_scope": ("The first token and token 3.", [("token", 1), ("token", 3)],
                    "The tokenizer makes 3 pieces.", []),
}


#: every other alternative of a rule, and readings where two rules compete for the same words
ALTERNATIVES = [
    ("Take an output width of 3.", [("set", "d_model", 3)]),  # label_setting: the output width is d_model
    ("The matrix $S$ therefore has rank 2, and $A$ is singular and has rank 1.",  # rank_claim: RANK_GAP
     [("rank", "S", "eq", "2"), ("rank", "A", "eq", "1")]),
    ("One head with $d_k = 2$ is enough.", [("set", "h", 1), ("set", "d_k", 2)]),  # single_head: ONE HEAD WITH
    ("A single-head example first.", [("set", "h", 1)]),  # single_head: SINGLE_HEAD_CASE
    ("There is only one kv head.", [("set", "g", 1)]),  # one_kv_head: ONLY ONE KV_HEAD
    ("A layer with one head of the eight.", []),  # not_one_head outweighs single_head
    ("Head 2: the keys.", [("head", 2)]),  # head_scope: a heading
    ("Head 2's weights.", [("head", 2)]),  # head_scope: a possessive
    ("Take $N = 5$ tokens, $h: 4$.", [("set", "n", 5), ("set", "h", 4)]),  # named_count; colon_setting
    # condition: a configuration named before its sizes in parentheses
    ("That is 512; for GPT-2 small ($h = 12$, $d_v = 64$) it is 768.", [("if", {"h": 12, "d_v": 64})]),
    ("We use a model ($h = 8$) here.", [("set", "h", 8)]),  # no condition word: a setting
    # condition: the words between "with" and the bindings may be names with digits
    ("With GPT-2-small sizes, $n = 1024$ and $d_k = 64$, the bound is 64.", [("if", {"n": 1024, "d_k": 64})]),
]


@pytest.mark.parametrize("sentence, expected", ALTERNATIVES)
def test_alternatives_and_competing_readings(sentence, expected):
    assert statements(sentence) == expected


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_reads_its_form(rule):
    sentence, expected, _, _ = CASES[rule]
    assert statements(sentence) == expected


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_leaves_other_forms(rule):
    _, _, sentence, expected = CASES[rule]
    assert statements(sentence) == expected


def test_hypothetical_mood():
    assert hypothetical("Had we used $h = 16$, $d_k$ would be 32.")
    assert hypothetical("(With h = 1 the head is the layer.)")
    assert hypothetical("Zum Beispiel mit h = 2.")
    assert hypothetical("For a purely hypothetical model with d_k = 16 it is 4.")
    assert not hypothetical("With $h = 8$, $d_k = 64$.")
    assert not hypothetical("The example uses $h = 8$.")


def test_a_clause_that_draws_a_result():
    assert concluded("Setting $h = 2$, we get ") and concluded("$d_{model} = 4$, $h = 2$, so ")
    assert concluded("Il vient donc ") and concluded("and hence ")
    assert not concluded("a single head with ") and not concluded("We get a bigger model, with ")
    assert not concluded("the solo part ")  # a word that holds a conclusion word is not one


def test_a_relation_chosen_or_required_and_a_counterfactual_clause():
    from mha_symbolic.check.prose import chosen, counterfactual

    assert chosen("Some propose setting the head size to the sequence length, ", "") and chosen("A head with ", "")
    assert chosen("So ", " is needed before full rank.") and chosen("we let ", "")
    assert not chosen("So ", " holds here.") and not chosen("We took a walk. Here ", "")
    assert counterfactual("If we had $d_k = 8$ the bound would be 6") and counterfactual("Had we used $h = 2$")
    assert not counterfactual("In the example we still have $d_k = 3$")


def test_the_words_before_a_relation_of_sizes_open_a_regime_or_not():
    """The ``regime`` form: a relation of sizes right after "when", "for", "a partir de", "sobald" speaks of a range
    of sizes; after "Here" or "so" it is a claim about the example."""
    from mha_symbolic.check.prose import regime

    assert all(regime(s) for s in ("the quadratic part dominates when ", "For ", "A partir de ", "sobald ",
                                   "and as long as "))
    assert not any(regime(s) for s in ("Here ", "So ", "we have ", "The formula ", "therefore "))


def test_a_conditional_clause_and_the_word_that_makes_a_size_a_condition():
    """The ``conditional`` and ``size_condition`` forms: "if", "when", "wenn" make a clause conditional; "with",
    "bei", "pour" right before a size make it the condition of its clause (alone: the clause's first word)."""
    from mha_symbolic.check.prose import conditional, size_condition

    assert conditional("only if $g < h$") and conditional("wenn $n > 2d$ gilt") and conditional("cuando $n = 4$")
    assert not conditional("Here $n = 4$") and not conditional("the motif is clear") and not conditional("Wendy")
    assert size_condition("With ") and size_condition("... sind es bei ") and size_condition("et pour ")
    assert size_condition("With ", alone=True) and not size_condition("sind es bei ", alone=True)
    assert not size_condition("We have ") and not size_condition("Bei dem Beispiel ist ")


def test_the_words_that_link_a_statement_to_the_variant_named_before_it():
    """The ``variant_link`` and ``contrast`` forms: a label, a bracket or a definition links "g = 1" to the MQA before
    it; "uses" does not; a contrast word makes a sentence about several variants."""
    from mha_symbolic.check.prose import contrasts, linked

    assert linked("**: ") and linked(" (multi-query): ") and linked(" attention (") and linked(" ")
    assert linked(" is ", defines=True) and linked(" is the limiting case ", defines=True)
    assert linked(" is the other limit ", defines=True) and linked(" is the limit ", defines=True)
    assert not linked(" is the limit of what we can store with ", defines=True)
    assert not linked(" uses ") and not linked(" is ") and not linked(" uses ", defines=True)
    assert contrasts("MHA stores 32 heads whereas MQA stores one") and contrasts("compared with GQA")
    assert not contrasts("Our layer uses MQA") and not contrasts("the bothersome detail")


def test_a_letter_that_counts_sequences_is_a_batch():
    """The ``batch_count`` form: "$N = 16$ sequences of 512 tokens" counts sequences, not tokens."""
    from mha_symbolic.check.prose import counts_sequences

    assert counts_sequences(" sequences of 512 tokens") and counts_sequences(" prompts") and \
        counts_sequences(" secuencias de 512 tokens")
    assert not counts_sequences(" tokens") and not counts_sequences(" sequence positions") and \
        not counts_sequences(" and 16 sequences")


def _rules() -> set[str]:
    grammar = resources.files("mha_symbolic.check").joinpath("prose.lark").read_text(encoding="utf-8")
    return set(re.findall(r"^\??([a-z][a-z_]*)(?:\.\d+)?:", grammar, re.M))


def test_a_statement_quoted_as_a_mistake_is_disowned():
    """The ``disowned`` form: words that quote what follows as a mistake, in several languages."""
    from mha_symbolic.check.prose import disowned

    assert disowned("the most common mistake was writing ") and disowned("Ein häufiger Fehler ist ")
    assert disowned("Un error frecuente: ") and disowned("常见的错误是")
    assert not disowned("So ") and not disowned("The terror of ") and not disowned("Here we write ")


def test_an_estimate_is_hedged():
    """The ``hedged`` form: words right before a ratio or an amount that make it an estimate."""
    from mha_symbolic.check.prose import hedged

    assert hedged("So roughly ") and hedged("which is about ") and hedged("costs ~")
    assert not hedged("costs 65536 numbers, ") and not hedged("So ")
    assert not hedged("an awesome ") and not hedged("thunder ")


def test_every_rule_of_the_grammar_has_its_cases():
    # the rules that only hold parts of others (terms, bindings, names) are read through the forms above; the
    # start rules of the mood, of variants and of conclusions have tests of their own
    parts = {"start", "mood", "hypothetical", "variants", "variant", "conclusions", "conclusion", "choices", "choice",
             "requirement", "counterfactual", "regime", "conditional", "size_condition", "variant_link", "contrast",
             "term",
             "first_term", "arith", "binding", "size_binding", "count_binding", "size_name", "rank_value",
             "size_product", "rank_relation", "matrix", "role_matrix", "factor", "disowned", "hedged", "scaling",
             "moment_value", "moment_number", "shape_subject", "subject_part", "shape", "batch_count"}
    assert _rules() - parts == set(CASES)


def test_a_long_sentence_is_read_in_bounded_pieces():
    sentence = ("the model, which we use with h = 8 heads and a width of 512, " * 200).strip()
    pieces = _pieces(sentence)
    assert all(len(piece) <= 1200 for _, piece in pieces) and len(pieces) >= 10
    assert "".join(piece for _, piece in pieces) == sentence
    assert ("set", "h", 8) in statements(sentence)


def test_a_sentence_without_clause_marks_is_cut_at_spaces():
    sentence = "word " * 1000
    pieces = _pieces(sentence)
    assert all(len(piece) <= 1200 for _, piece in pieces)
    assert "".join(piece for _, piece in pieces) == sentence


def test_variants_are_read_apart_with_their_key_value_heads():
    found = [(v.kind, v.kv_heads) for _, v in variants(_plain(
        "GQA-8 needs a quarter of the MHA (32 KV heads) cache; with MQA (a single KV head), or multi-query "
        "attention."))]
    assert found == [("gqa", 8), ("mha", 32), ("mqa", 1), ("mqa", None)]
    assert variants(_plain("The SHA-256 of the file, and a CMHA layer.")) == ()
    found = [(v.kind, v.kv_heads) for _, v in variants(_plain(
        "GQA with 8 KV heads needs a quarter of the MHA cache; MQA using one key/value head; GQA with 8 layers."))]
    assert found == [("gqa", 8), ("mha", None), ("mqa", 1), ("gqa", None)]


def test_counted_heads_in_other_languages_and_their_key_value_qualifier():
    assert statements("Le modèle a 8 têtes de 64 colonnes, mais seulement 2 têtes KV.") == [("set", "h", 8),
                                                                                            ("set", "g", 2)]
    assert statements("Das Modell hat $h = 8$ Köpfe und $N = 6$ Schichten.") == [("set", "h", 8), ("layers", "N", 6)]


def test_full_width_punctuation_ends_a_word():
    """Chinese prose writes no spaces: "头（MHA" is a word, a full-width bracket and a variant's name."""
    said = variants(_plain("GQA 使用 $g = 8$ 个 KV 头（MHA 相当于 $g = h = 32$，MQA 相当于 $g = 1$）"))
    assert [v.kind for _, v in said] == ["gqa", "mha", "mqa"]


@pytest.mark.parametrize("sentence, expected", [
    ("$QK^\\top$ é $2 \\times 3$ e tem posto $1$, pois", [("rank", "QK^T", "eq", "1")]),
    ("QK^T is 2 x 3 and has rank 2.", [("rank", "QK^T", "eq", "2")]),
    ("Die Matrix $S$ hat Rang 2.", [("rank", "S", "eq", "2")]),
    ("La matriz $A$ tiene rango 2.", [("rank", "A", "eq", "2")]),
    ("El rango de la ventana es 2 y el puesto 3.", []),
    ("- $S \\in \\mathbb{R}^{4 \\times 4}$ but it has rank 2, because", [("rank", "S", "eq", "2")]),
    ("S is 4 x 4 and it has rank 3.", [("rank", "S", "eq", "3")]),
    ("- $S' \\in \\mathbb{R}^{4 \\times 2}$ has rank 2 (full column rank)", [("rank", "S'", "eq", "2")]),
    ("S has rank at most 64, so it cannot be full rank.", [("rank", "S", "le", "64"), ("rank", "S", "lt", "full")]),
    ("Here $QK^\\top$ can be full rank.", [("rank", "QK^T", "can", "full")]),
    ("It cannot be full rank.", []),  # no matrix before it in the sentence: nothing to say
    ("$W_K^{(i)\\top} W_Q^{(i)}$ is $d \\times d$, so its rank is at most $d_k$.",
     [("shape", "W_K^(i)ᵀ W_Q^(i)", ("d", "d")), ("rank", "W_K^(i)ᵀ W_Q^(i)", "le", "d_k")]),
])
def test_a_rank_claim_in_other_languages_and_after_a_shape(sentence, expected):
    assert statements(sentence) == expected


@pytest.mark.parametrize("sentence, expected", [
    ("W^K and W^V are 4096×512 (4,194,304 params each) instead of 4096×4096.",
     [("shape", "W^V", ("4096", "512")), ("restated", "4096* 512", "4194304 params")]),
    ("the mask is 8 x 128, i.e. 1024 entries.", [("restated", "8 x 128", "1024 entries")]),
    ("The batch is 8 x 512 (the sequence length) tokens, and 512 (4 params).", []),
])
def test_a_shape_restated_as_its_count_of_entries(sentence, expected):
    assert statements(sentence) == expected


@pytest.mark.parametrize("sentence, expected", [
    ("Plain MHA (32 KV heads) would need 4× more, i.e. 2 GiB.", [("set", "g", 32), ("ratio", "4")]),
    ("MHA needs four times more memory than MQA.", [("ratio", "4")]),
    ("It is 4 more than before.", []),
])
def test_a_ratio_the_other_way_round(sentence, expected):
    assert statements(sentence) == expected


@pytest.mark.parametrize("sentence, expected", [
    ("a token costs 819 200 bytes, which is 800 KiB.", [("restated", "819200 bytes", "800 KiB")]),
    ("It is 20 KiB, i.e. 20 480 bytes.", [("restated", "20 KiB", "20480 bytes")]),
    ("It is 20 KiB, i.e. 1 2 480 bytes.", []),  # a part of a group of digits is no number
])
def test_an_amount_restated_with_its_digits_grouped_by_spaces(sentence, expected):
    assert statements(sentence) == expected


def test_an_imperative_that_opens_a_sentence_sets_the_example_and_one_after_a_comma_is_a_condition():
    # was a condition: the plain-text example of a document bound nothing, where the same words in math bound it
    assert statements("Take n = 1024 tokens, d_model = 1024 and h = 16 heads.") == [
        ("set", "n", 1024), ("set", "d_model", 1024), ("set", "h", 16)]
    assert statements("The cost grows quickly; take n = 4 and it is tiny.") == [("if", {"n": 4})]
