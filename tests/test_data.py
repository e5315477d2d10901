"""Data sets (kernelviz/data/datasets.py), CSV loading and validation (kernelviz/data/csvfile.py).

References are independent of the module: formulas evaluated by hand or with the math module, draws
repeated with plain NumPy, expected arrays written out literally.
"""

from __future__ import annotations

import codecs
import contextlib
import dataclasses
import io
import math
import pickle
import warnings

import numpy as np
import pytest

import kernelviz as kv
from kernelviz.data import csvfile as csvdata
from kernelviz.data import datasets as data
from kernelviz.data.csvfile import MAX_CSV_BYTES, MAX_CSV_MB, MAX_CSV_ROWS
from kernelviz.data.datasets import subsample

# ------------------------------------------------------------------------------------- synthetic sets


def test_blog_data_matches_the_formula_in_float32() -> None:
    """The post's grid and formula, computed in float32 as the post computes them (its noise draws are
    checked in tests/test_post.py)."""
    ds = kv.blog_data()
    assert ds.name == "blog" and len(ds) == 150 and ds.x.dtype == np.float64
    np.testing.assert_allclose(ds.x, np.linspace(-3, 3, 150), rtol=0, atol=4e-7)
    x = ds.x
    f = 0.5 * np.sin(x) - np.sin(3 * x) + 0.2 * x**2
    sd = 0.2 + 0.05 * np.abs(x)
    eps = (ds.y - f) / sd
    assert abs(np.mean(eps)) < 0.3 and 0.7 < np.std(eps) < 1.3
    np.testing.assert_allclose(ds.y, f + sd * eps.astype(np.float32), rtol=0, atol=2e-6)
    assert ds.true_mean is not None and ds.noise_sd is not None
    assert ds.columns == () and ds.n_rows_read == 150


def test_d2l_data_matches_the_formula_and_numpy_draws() -> None:
    ds = kv.d2l_data()
    rng = np.random.default_rng(0)
    x = np.sort(rng.uniform(0, 5, 50))
    y = 2 * np.sin(x) + x**0.8 + 0.5 * rng.standard_normal(50)
    np.testing.assert_allclose(ds.x, x, rtol=0, atol=0)
    np.testing.assert_allclose(ds.y, y, rtol=0, atol=1e-13)
    assert ds.name == "d2l" and len(ds) == 50
    assert ds.x[0] >= 0 and ds.x[-1] <= 5


@pytest.mark.parametrize(
    ("func", "x", "expected"),
    [
        (data.blog_mean, 0.0, 0.0),
        # 0.5 sin(π/2) − sin(3π/2) + 0.2 (π/2)² = 0.5 + 1 + 0.05 π²
        (data.blog_mean, math.pi / 2, 1.5 + 0.05 * math.pi**2),
        # 0.5 sin(−1) − sin(−3) + 0.2 = −0.4207354924 + 0.1411200081 + 0.2
        (data.blog_mean, -1.0, -0.0796154843),
        (data.blog_noise_sd, 0.0, 0.2),
        (data.blog_noise_sd, -2.0, 0.3),
        (data.blog_noise_sd, 3.0, 0.35),
        (data.d2l_mean, 0.0, 0.0),
        (data.d2l_mean, 1.0, 2 * 0.8414709848078965 + 1.0),
        (data.d2l_mean, math.pi, math.pi**0.8),
        (data.d2l_mean, 4.0, 2 * math.sin(4.0) + 4.0**0.8),
        (data.d2l_noise_sd, 2.5, 0.5),
    ],
)
def test_true_mean_and_noise_at_hand_computed_points(func, x: float, expected: float) -> None:
    got = func(np.array([x]))
    assert got.shape == (1,)
    assert got[0] == pytest.approx(expected, abs=1e-9)


def test_d2l_mean_is_undefined_left_of_zero() -> None:
    assert np.isnan(data.d2l_mean(np.array([-0.5]))[0])


@pytest.mark.parametrize("name", list(kv.DATASETS))
def test_synthetic_sets_are_reproducible_sorted_finite_and_read_only(name: str) -> None:
    a, b = kv.make_dataset(name, n=200, seed=7), kv.make_dataset(name, n=200, seed=7)
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.y, b.y)
    other = kv.make_dataset(name, n=200, seed=8)
    assert not np.array_equal(a.y, other.y)
    assert a.x.shape == a.y.shape == (200,)
    assert np.all(np.diff(a.x) >= 0) and np.all(np.isfinite(a.x)) and np.all(np.isfinite(a.y))
    with pytest.raises(ValueError):
        a.x[0] = 1.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.name = "other"  # type: ignore[misc]
    assert a.title == kv.DATASETS[name].title and a.source and a.notes


def test_make_dataset_defaults_come_from_the_factories() -> None:
    for name, (title, factory) in kv.DATASETS.items():
        ds, ref = kv.make_dataset(name), factory()
        np.testing.assert_array_equal(ds.y, ref.y)
        assert ds.title == title
    assert len(kv.make_dataset("blog")) == 150
    assert len(kv.make_dataset("d2l")) == 50


@pytest.mark.parametrize(
    ("kwargs", "phrase"),
    [
        ({"name": "sine"}, "Choose one of: 'blog', 'd2l'"),
        ({"name": "blog", "n": 2}, "between 3 and 5,000"),
        ({"name": "blog", "n": data.MAX_SYNTHETIC_POINTS + 1}, "between 3 and 5,000"),
        ({"name": "d2l", "n": 10.5}, "whole number"),
        ({"name": "d2l", "n": "50"}, "whole number"),
        ({"name": "d2l", "n": True}, "whole number"),
        ({"name": "blog", "seed": -1}, "0 or a positive whole number"),
        ({"name": "blog", "seed": 1.5}, "whole number"),
    ],
)
def test_make_dataset_rejects_bad_arguments(kwargs: dict, phrase: str) -> None:
    with pytest.raises(kv.DataError) as info:
        kv.make_dataset(**kwargs)
    assert phrase in str(info.value)


def test_make_dataset_accepts_numpy_integers() -> None:
    assert len(kv.make_dataset("blog", n=np.int64(40), seed=np.uint8(3))) == 40


def test_domain_and_grid() -> None:
    ds = kv.blog_data()
    assert ds.domain == (-3.0, 3.0) and ds.span == 6.0
    csv = kv.load_csv(b"x,y\n2.5,1\n-1,0\n0.5,2\n")  # unsorted rows: the span is max x − min x
    assert csv.span == 3.5
    np.testing.assert_allclose(ds.grid(5), [-3.3, -1.65, 0.0, 1.65, 3.3], atol=1e-12)
    assert ds.grid().shape == (256,)
    d2l = kv.d2l_data()
    lo, hi = d2l.domain
    g = d2l.grid(101)
    # padded 5% on each side, but never left of 0 where x^0.8 is not real
    assert g[0] == pytest.approx(max(0.0, lo - 0.05 * (hi - lo)))
    assert g[-1] == pytest.approx(hi + 0.05 * (hi - lo))
    assert np.all(np.isfinite(d2l.true_mean(g)))
    with pytest.raises(kv.DataError, match="at least 2"):
        ds.grid(1)


def test_dataset_pickles_for_caching() -> None:
    ds = kv.blog_data(n=20)
    back = pickle.loads(pickle.dumps(ds))
    np.testing.assert_array_equal(back.y, ds.y)
    np.testing.assert_array_equal(back.true_mean(back.x), ds.true_mean(ds.x))


# ------------------------------------------------------------------------------ dataset_from_arrays


def test_dataset_from_arrays_sorts_and_drops_non_finite_pairs() -> None:
    ds = kv.dataset_from_arrays([3, 1, np.nan, 2, 5, 4], [30, 10, 0, 20, np.inf, 40], kv.DataInfo(title="T"))
    np.testing.assert_array_equal(ds.x, [1, 2, 3, 4])
    np.testing.assert_array_equal(ds.y, [10, 20, 30, 40])
    assert ds.n_rows_read == 6 and ds.title == "T" and ds.name == "custom"
    assert any("Dropped 2 of 6 rows" in n for n in ds.notes)
    assert ds.true_mean is None and ds.noise_sd is None


def test_dataset_from_arrays_keeps_duplicated_x_in_stable_order() -> None:
    ds = kv.dataset_from_arrays([2, 1, 2, 1], [1, 2, 3, 4])
    np.testing.assert_array_equal(ds.x, [1, 1, 2, 2])
    np.testing.assert_array_equal(ds.y, [2, 4, 1, 3])


@pytest.mark.parametrize(
    ("x", "y", "phrase"),
    [
        ([1, 2, 3], [1, 2], "same length; got shapes (3,) and (2,)"),
        ([[1, 2], [3, 4]], [[1, 2], [3, 4]], "flat sequences"),
        ([1, 2], [1, 2], "at least 3"),
        ([1, 2, np.nan], [1, 2, 3], "Only 2 usable rows"),
        ([1, 1, 1], [1, 2, 3], "x values that differ"),
        ([1, 2, 1e200], [1, 2, 3], "between −1e150 and 1e150"),
        ([1, 2, 3], [1, -2e151, 3], "between −1e150 and 1e150"),
        (["a", "b", "c"], [1, 2, 3], "sequences of real numbers"),
        ([1j, 2, 3], [1, 2, 3], "sequences of real numbers"),
        (np.array([1j, 2, 3]), [1, 2, 3], "sequences of real numbers (complex numbers)"),
        ([{}, 1, 2], [1, 2, 3], "sequences of real numbers"),
    ],
)
def test_dataset_from_arrays_rejects(x, y, phrase: str) -> None:
    with pytest.raises(kv.DataError) as info:
        kv.dataset_from_arrays(x, y)
    assert phrase in str(info.value)


# --------------------------------------------------------------------------------------- subsample


def test_subsample_keeps_one_point_per_rank_stratum() -> None:
    ds = kv.dataset_from_arrays(np.arange(1000.0), np.arange(1000.0) * 2)
    sub = subsample(ds, 64, seed=3)
    assert len(sub) == 64
    ranks = sub.x.astype(int)  # x equals its rank here
    edges = (np.arange(65) * 1000) // 64
    assert np.all((ranks >= edges[:-1]) & (ranks < edges[1:]))
    np.testing.assert_array_equal(sub.y, 2 * sub.x)
    assert sub.notes[-1].startswith("Training uses 64 of 1,000 points (an even subsample")
    again = subsample(ds, 64, seed=3)
    np.testing.assert_array_equal(again.x, sub.x)
    assert not np.array_equal(subsample(ds, 64, seed=4).x, sub.x)


def test_subsample_keeps_metadata_and_returns_small_sets_unchanged() -> None:
    ds = kv.blog_data(n=300)
    sub = subsample(ds, 100)
    assert sub.true_mean is ds.true_mean and sub.title == ds.title and sub.n_rows_read == 300
    assert np.all(np.diff(sub.x) > 0)
    assert subsample(ds, 300) is ds
    with pytest.raises(kv.DataError, match="at least 3"):
        subsample(ds, 2)


# --------------------------------------------------------------------------------------- CSV: bad

BAD_CSV = [
    ("empty", b"", "empty"),
    ("only whitespace", b"  \n\n \t\n", "empty"),
    ("only a header", b"x,y\n", "only a header row"),
    ("header and one row", b"x,y\n1,2\n", "Only 1 usable row"),
    ("one numeric row, no header", b"1,2\n", "Only 1 usable row"),
    ("two rows", b"x,y\n1,2\n2,3\n", "at least 3"),
    ("NUL-filled", b"\x00" * 4096, "binary"),
    ("binary with a NUL", b"x,y\n1,2\x00\x01\x02\n", "binary"),
    ("control characters", bytes(range(1, 32)) * 20, "no column of numbers"),
    ("png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 50, "binary"),
    ("UTF-16 without BOM", "x,y\n1,2\n2,4\n3,8\n".encode("utf-16-le"), "save the data as CSV in UTF-8"),
    ("xlsx", b"PK\x03\x04\x14\x00\x06\x00" + b"\x00" * 100, "Excel workbook"),
    ("old xls", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 100, "Excel"),
    ("pdf", b"%PDF-1.7\n" + b"\x00" * 50, "PDF"),
    ("bad UTF-16", b"\xff\xfe" + b"\x00\xd8" + b"1\x00", "starts like UTF-16 text but cannot be decoded"),
    ("one column", b"y\n1\n2\n3\n4\n", "only one column"),
    ("text only", b"a,b\nfoo,bar\nbaz,qux\nx,y\n", "no column of numbers"),
    ("one numeric column", b"name,value\na,1\nb,2\nc,3\n", "only one column ('value') of numbers"),
    ("comments only", b"# a\n# b\n", "no data rows"),
    ("all x equal", b"x,y\n1,2\n1,3\n1,4\n", "x values that differ"),
    ("huge value", b"x,y\n1e308,1\n2,3\n3,4\n4,5\n", "between −1e150 and 1e150"),
    ("huge y", b"x,y\n1,1\n2,-1e151\n3,4\n4,5\n", "Column 'y' has the value -1e+151 at data row 2"),
    ("all rows bad", b"x,y\ninf,1\nnan,2\nNA,3\n,4\nabc,5\n", "Only 0 usable rows"),
    ("unmatched quote", b'x,y\n"1,2\n2,3\n3,4\n', "EOF inside string"),
    ("200,000-digit field", b"x,y\n" + b"1" * 200_000 + b",2\n1,2\n3,4\n", "Only 2 usable rows"),
    ("600,000 columns on one line", b"1," * 600_000, "600,001 columns; the limit is 10,000"),
]


@pytest.mark.parametrize(("content", "phrase"), [c[1:] for c in BAD_CSV], ids=[c[0] for c in BAD_CSV])
def test_bad_csv_raises_data_error_with_a_helpful_message(content: bytes, phrase: str) -> None:
    with pytest.raises(kv.DataError) as info:
        kv.load_csv(content)
    assert phrase in str(info.value)


def test_data_error_is_a_value_error() -> None:
    assert issubclass(kv.DataError, ValueError)


# -------------------------------------------------------------------------------------- CSV: good

X3, Y3 = [1.0, 2.0, 3.0], [2.0, 4.0, 8.0]
GOOD_CSV = [
    ("comma with header", b"x,y\n1,2\n2,4\n3,8\n", X3, Y3),
    ("no header", b"1,2\n2,4\n3,8\n", X3, Y3),
    ("unsorted rows", b"x,y\n3,8\n1,2\n2,4\n", X3, Y3),
    ("CRLF", b"x,y\r\n1,2\r\n2,4\r\n3,8\r\n", X3, Y3),
    ("classic Mac CR", b"x,y\r1,2\r2,4\r3,8\r", X3, Y3),
    ("no final newline", b"x,y\n1,2\n2,4\n3,8", X3, Y3),
    ("blank lines and comments", b"# made by hand\n\nx,y\n\n1,2\n# mid\n2,4\n\n3,8\n\n", X3, Y3),
    ("spaces after commas", b"x, y\n1, 2\n2, 4\n3, 8\n", X3, Y3),
    ("semicolon", b"x;y\n1;2\n2;4\n3;8\n", X3, Y3),
    ("semicolon decimal comma", b"x;y\n1,0;2,0\n2,0;4\n3;8,0\n", X3, Y3),
    ("semicolon decimal comma no header", b"1,0;2,0\n2,0;4,0\n3,0;8,0\n", X3, Y3),
    ("tab", b"x\ty\n1\t2\n2\t4\n3\t8\n", X3, Y3),
    ("pipe", b"x|y\n1|2\n2|4\n3|8\n", X3, Y3),
    ("whitespace", b"x   y\n 1  2\n2 4\n3\t 8\n", X3, Y3),
    ("quoted fields", b'"x","y"\n"1","2"\n"2","4"\n"3","8"\n', X3, Y3),
    ("quoted text with delimiter", b'label,x,y\n"a, b",1,2\n"c",2,4\n"d ""e""",3,8\n', X3, Y3),
    ("UTF-8 BOM", "x,y\n1,2\n2,4\n3,8\n".encode("utf-8-sig"), X3, Y3),
    ("UTF-16 with BOM", "x,y\n1,2\n2,4\n3,8\n".encode("utf-16"), X3, Y3),
    ("UTF-16-BE with BOM", codecs.BOM_UTF16_BE + "x,y\n1,2\n2,4\n3,8\n".encode("utf-16-be"), X3, Y3),
    ("latin-1 header", "température °C,µ\n1,2\n2,4\n3,8\n".encode("latin-1"), X3, Y3),
    ("exponents and signs", b"x,y\n1e0,+2\n0.2E1,4.0\n+3,8e0\n", X3, Y3),
    ("big but allowed", b"x,y\n1,2\n2,4\n3,8\n4,1e150\n", [1, 2, 3, 4], [2, 4, 8, 1e150]),
    ("duplicated x", b"x,y\n1,2\n1,3\n2,4\n", [1, 1, 2], [2, 3, 4]),
    (
        "inf nan empty NA dropped",
        b"x,y\n1,2\ninf,1\n2,nan\n,5\nNA,3\n2,4\n-Infinity,0\n3,8\nnull,1\n4,N/A\n",
        X3,
        Y3,
    ),
    ("1e999 overflows to inf and is dropped", b"x,y\n1,2\n1e999,3\n2,4\n3,8\n", X3, Y3),
    ("ragged rows", b"x,y,z\n1,2,9\n2,4\n3,8,9,9\n5\n", X3, Y3),
    (
        "a row wider than the first 1,000",
        b"x,y\n" + b"1,2\n2,4\n" * 600 + b"3,8,9\n",
        [1] * 600 + [2] * 600 + [3],
        [2] * 600 + [4] * 600 + [8],
    ),
    ("trailing delimiter", b"x,y,\n1,2,\n2,4,\n3,8,\n", X3, Y3),
    ("units row below header", b"t,v\ns,m\n1,2\n2,4\n3,8\n", X3, Y3),
    ("text column first", b"name,x,y\na,1,2\nb,2,4\nc,3,8\n", X3, Y3),
    ("empty header cell", b",y\n1,2\n2,4\n3,8\n", X3, Y3),
    ("decimal points and commas mixed", b"x;y\n1.0;2,0\n2;4.0\n3,0;8\n", X3, Y3),
    ("tab with decimal commas", b"x\ty\n1,0\t2,0\n2,0\t4\n3\t8,0\n", X3, Y3),
    ("comment after the values", b"x,y # units: s, m\n1,2 # first\n2,4\n3,8\n", X3, Y3),
    ("150 comment lines first", b"# note\n" * 150 + b"x,y\n1,2\n2,4\n3,8\n", X3, Y3),
    ("indented comment, empty cells", b"  # note\nx,y\n1,2\n,\n  \n\t\n2,4\n3,8\n", X3, Y3),
    ("quoted field over two lines", b'x,y,note\n1,2,"a,b,c,d,e\nf,g,h,i"\n2,4,z\n3,8,w\n', X3, Y3),
]


@pytest.mark.parametrize(("content", "x", "y"), [c[1:] for c in GOOD_CSV], ids=[c[0] for c in GOOD_CSV])
def test_good_csv_formats(content: bytes, x: list[float], y: list[float]) -> None:
    ds = kv.load_csv(content)
    np.testing.assert_array_equal(ds.x, x)
    np.testing.assert_array_equal(ds.y, y)
    assert ds.x.dtype == ds.y.dtype == np.float64
    assert ds.true_mean is None and ds.noise_sd is None and ds.name == "csv"
    assert all(isinstance(c, str) for c in ds.columns)
    assert isinstance(ds.x_label, str) and isinstance(ds.y_label, str)


def test_csv_notes_count_dropped_rows_and_describe_the_file() -> None:
    ds = kv.load_csv(b"x;y\n1;2\n2,5;x\n3;4\n;5\n4;NaN\n5;6\n")
    assert ds.n_rows_read == 6
    dropped = [n for n in ds.notes if n.startswith("Dropped 3 of 6 rows")]
    assert len(dropped) == 1 and "(the first at data row 2)" in dropped[0]
    read = [n for n in ds.notes if n.startswith("Read 6 data rows")]
    assert len(read) == 1 and "semicolons" in read[0] and "with a header row" in read[0]
    np.testing.assert_array_equal(ds.x, [1, 3, 5])


def test_csv_reads_decimal_commas_and_notes_the_encoding() -> None:
    ds = kv.load_csv("x;y\n1,5;2\n2,5;4\n3,5;8\n".encode("cp1252"))
    np.testing.assert_array_equal(ds.x, [1.5, 2.5, 3.5])
    latin = kv.load_csv("é,y\n1,2\n2,4\n3,8\n".encode("latin-1"))
    assert latin.x_label == "é" and any("not UTF-8" in n for n in latin.notes)


@pytest.mark.parametrize(
    ("content", "present", "absent"),
    [
        (b"x\ty\n1\t2\n2\t4\n3\t8\n", ["tabs", "with a header row"], ["decimal comma", "UTF-8"]),
        (b"1 2\n2  4\n3 8\n", ["whitespace", "without a header row"], ["decimal comma"]),
        (b"1|2\n2|4\n3|8\n", ["pipes", "without a header row"], []),
        (b"1,5;2\n2;4\n3;8\n", ["semicolons", "without a header row"], ["with a header"]),
        ("x,y\n1,2\n2,4\n3,8\n".encode("utf-16"), ["UTF-16", "not UTF-8"], []),
        ("x,y\n1,2\n2,4\n3,8\n".encode("utf-8-sig"), ["commas"], ["UTF-8", "Dropped"]),
        (b"x,y\n1,2\n2,4\n3,8\n", ["Read 3 data rows", "1,000,000"], ["Dropped"]),
    ],
)
def test_csv_notes_say_what_loading_did(content: bytes, present: list[str], absent: list[str]) -> None:
    text = " ".join(kv.load_csv(content).notes)
    for fragment in present:
        assert fragment in text
    for fragment in absent:
        assert fragment not in text


def test_rows_of_empty_cells_are_skipped_like_blank_lines() -> None:
    ds = kv.load_csv(b"x,y,z\n1,2,a\n,,\n , \n2,4,b\n,,c\nbad,8,d\n3,8,d\n")
    np.testing.assert_array_equal(ds.x, X3)
    assert ds.n_rows_read == 4  # x and y both empty: not a row; "bad,8,d" is a row, and dropped
    assert any(n.startswith("Dropped 1 of 4 rows") for n in ds.notes)


def test_decimal_commas_further_down_are_read() -> None:
    rows = b"".join(b"%d;%d\n" % (i, 2 * i) for i in range(2000))
    ds = kv.load_csv(b"x;y\n" + rows + b"2000,5;4001,0\n")
    assert len(ds) == 2001 and ds.x[-1] == 2000.5 and ds.y[-1] == 4001.0


def test_loading_a_large_mixed_column_warns_nothing() -> None:
    content = b"x,y\n" + b"".join(b"%d,%d.5\n" % (i, i % 7) for i in range(300_000)) + b"n/a,oops\nz,1\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = kv.load_csv(content)
    assert ds.n_rows_read == 300_002 and len(ds) == 300_000
    assert any("Dropped 2 of 300,002 rows" in n and "data row 300001" in n for n in ds.notes)


def test_csv_header_names_are_cleaned() -> None:
    long = "a" * 100
    content = f' x \t,{long},,x,"line\nbreak"\n1,2,3,4,5\n2,3,4,5,6\n3,4,5,6,7\n'.encode()
    ds = kv.load_csv(content)
    assert ds.columns == ("x", "a" * 59 + "…", "column 3", "x (2)", "line break")
    assert all(len(c) <= 60 for c in ds.columns)
    assert ds.x_label == "x" and ds.y_label == "a" * 59 + "…"


def test_csv_without_header_names_columns_by_position() -> None:
    ds = kv.load_csv(b"1,2,3\n2,4,6\n3,8,9\n")
    assert ds.columns == ("column 1", "column 2", "column 3")
    assert (ds.x_label, ds.y_label) == ("column 1", "column 2")
    assert any("without a header row" in n for n in ds.notes)


def test_thousands_of_columns() -> None:
    header = ",".join(f"c{i}" for i in range(3000))
    rows = "\n".join(",".join(str(i * j) for i in range(3000)) for j in range(1, 6))
    ds = kv.load_csv(f"{header}\n{rows}\n".encode(), x_column="c2", y_column=2999)
    np.testing.assert_array_equal(ds.x, [2, 4, 6, 8, 10])
    np.testing.assert_array_equal(ds.y, 2999 * np.arange(1, 6))
    assert len(ds.columns) == 3000


# ----------------------------------------------------------------------------------- column choice

WIDE = b"id,time,label,temp,pressure\n1,0.5,a,10,100\n2,0.1,b,20,200\n3,0.9,c,30,300\n4,0.3,d,40,400\n"


@pytest.mark.parametrize(
    ("x_column", "y_column", "x", "y"),
    [
        (None, None, [1, 2, 3, 4], [0.5, 0.1, 0.9, 0.3]),
        ("time", "temp", [0.1, 0.3, 0.5, 0.9], [20, 40, 10, 30]),
        (1, 4, [0.1, 0.3, 0.5, 0.9], [200, 400, 100, 300]),
        (np.int64(3), "pressure", [10, 20, 30, 40], [100, 200, 300, 400]),
        ("temp", None, [10, 20, 30, 40], [1, 2, 3, 4]),
        ("time", None, [0.1, 0.3, 0.5, 0.9], [2, 4, 1, 3]),
        (None, "id", [0.1, 0.3, 0.5, 0.9], [2, 4, 1, 3]),
    ],
)
def test_column_selection(x_column, y_column, x, y) -> None:
    ds = kv.load_csv(WIDE, x_column=x_column, y_column=y_column)
    np.testing.assert_allclose(ds.x, x)
    np.testing.assert_allclose(ds.y, y)
    assert ds.columns == ("id", "time", "temp", "pressure")


CHOICES = "Numeric columns (position: name): 0: 'id'; 1: 'time'; 3: 'temp'; 4: 'pressure'."


@pytest.mark.parametrize(
    ("x_column", "y_column", "phrase"),
    [
        ("speed", None, "no numeric column 'speed' for x"),
        (None, 7, "no numeric column 7 for y"),
        (-1, None, "no numeric column -1 for x"),
        ("label", None, "no numeric column 'label' for x"),
        (1.5, None, "no numeric column 1.5 for x"),
        ("time", 1, "x and y are both column 'time'"),
    ],
)
def test_column_selection_errors_list_the_choices(x_column, y_column, phrase: str) -> None:
    with pytest.raises(kv.DataError) as info:
        kv.load_csv(WIDE, x_column=x_column, y_column=y_column)
    assert phrase in str(info.value)
    assert CHOICES in str(info.value) or "both" in phrase


# ---------------------------------------------------------------------------------- sources and limits

GOOD = b"x,y\n1,2\n2,4\n3,8\n"


def test_sources_path_str_bytes_and_file_objects(tmp_path) -> None:
    path = tmp_path / "measurements.csv"
    path.write_bytes(GOOD)
    sources = [
        path,
        str(path),
        GOOD,
        bytearray(GOOD),
        memoryview(GOOD),
        io.BytesIO(GOOD),
        io.StringIO(GOOD.decode()),
    ]
    for source in sources:
        ds = kv.load_csv(source)
        np.testing.assert_array_equal(ds.y, Y3)
    assert kv.load_csv(path).title == "measurements.csv"
    with open(path, encoding="utf-8") as text_file:
        assert kv.load_csv(text_file).title == "measurements.csv"


def test_streamlit_uploaded_file_is_read_from_the_start_every_time() -> None:
    from streamlit.runtime.uploaded_file_manager import UploadedFile, UploadedFileRec

    upload = UploadedFile(UploadedFileRec("id-1", "folder/data.csv", "text/csv", GOOD), None)
    upload.read()  # an earlier rerun already consumed it
    first = kv.load_csv(upload)
    second = kv.load_csv(upload)
    np.testing.assert_array_equal(first.y, Y3)
    np.testing.assert_array_equal(second.y, Y3)
    assert first.title == "data.csv" and "data.csv" in first.source


@pytest.mark.parametrize(
    ("source", "phrase"),
    [
        ("/no/such/file.csv", "'/no/such/file.csv' cannot be read"),
        ("bad\x00path", "cannot be read"),
        (12, "got a int"),
        (None, "got a NoneType"),
    ],
)
def test_bad_sources(source, phrase: str) -> None:
    with pytest.raises(kv.DataError) as info:
        kv.load_csv(source)
    assert phrase in str(info.value)


def test_a_folder_is_not_a_file(tmp_path) -> None:
    with pytest.raises(kv.DataError, match="cannot be read"):
        kv.load_csv(tmp_path)


def test_a_failing_reader_becomes_a_data_error() -> None:
    class Broken:
        def read(self, n: int = -1) -> bytes:
            raise OSError("disk on fire")

    with pytest.raises(kv.DataError, match="could not be read: disk on fire"):
        kv.load_csv(Broken())


def test_limit_constants_agree() -> None:
    assert MAX_CSV_BYTES == MAX_CSV_MB * 1024 * 1024
    assert isinstance(MAX_CSV_MB, int) and MAX_CSV_ROWS == 1_000_000


@pytest.fixture
def small_byte_limit(monkeypatch):
    monkeypatch.setattr(csvdata, "MAX_CSV_BYTES", 1000)
    return 1000


def test_byte_limit_on_bytes_and_paths(small_byte_limit, tmp_path) -> None:
    content = b"x,y\n" + b"1,2\n" * 300
    with pytest.raises(kv.DataError, match="larger than 1,000 bytes"):
        kv.load_csv(content)
    path = tmp_path / "big.csv"
    path.write_bytes(content)
    with pytest.raises(kv.DataError, match="larger than 1,000 bytes"):
        kv.load_csv(path)
    assert kv.load_csv(b"x,y\n" + b"".join(b"%d,1\n" % i for i in range(100))).n_rows_read == 100


def test_byte_limit_reads_at_most_one_byte_too_many_from_an_endless_stream(small_byte_limit) -> None:
    class Endless:
        served = 0

        def read(self, n: int = -1) -> bytes:
            assert n >= 0  # an unbounded read of an endless stream would never return
            Endless.served += n
            return b"1" * n

    with pytest.raises(kv.DataError, match="larger than 1,000 bytes"):
        kv.load_csv(Endless())
    assert Endless.served == small_byte_limit + 1


def test_row_limit(monkeypatch) -> None:
    monkeypatch.setattr(csvdata, "MAX_CSV_ROWS", 100)
    rows = b"".join(b"%d,%d\n" % (i, i * i) for i in range(100))
    assert kv.load_csv(b"x,y\n# note\n\n" + rows).n_rows_read == 100
    with pytest.raises(kv.DataError, match="more than 100 data rows"):
        kv.load_csv(rows + b"100,1\n")


def test_two_million_rows_stop_at_the_row_limit(monkeypatch) -> None:
    monkeypatch.setattr(csvdata, "MAX_CSV_ROWS", 1000)
    # 8 MB of rows, then an unmatched quote: parsing it would raise a different error, so the row-limit
    # message shows that parsing stopped early.
    content = b"x,y\n" + b"1,2\n" * 2_000_000 + b'"unclosed,1\n' + b"3,4\n" * 10
    with pytest.raises(kv.DataError, match="more than 1,000 data rows"):
        kv.load_csv(content)


def test_column_limit(monkeypatch) -> None:
    monkeypatch.setattr(csvdata, "MAX_CSV_COLUMNS", 10)
    with pytest.raises(kv.DataError, match="11 columns; the limit is 10"):
        kv.load_csv(b"1,2,3,4,5,6,7,8,9,10,11\n" * 3)


# ------------------------------------------------------------------------------------------- fuzzing


def _check_valid(ds: kv.Dataset) -> None:
    assert len(ds) >= 3 and ds.x.shape == ds.y.shape
    assert np.all(np.isfinite(ds.x)) and np.all(np.isfinite(ds.y))
    assert np.all(np.abs(ds.x) <= 1e150) and np.all(np.abs(ds.y) <= 1e150)
    assert np.all(np.diff(ds.x) >= 0) and ds.x[0] < ds.x[-1]
    assert all(isinstance(c, str) and len(c) <= 60 for c in ds.columns)


def test_a_quote_that_joins_lines_is_not_taken_for_an_index_column() -> None:
    content = b'a b "c\n 0  0\t0\n 1  -1\t1\n 2  -2\t2\n 3  -3\t3\n 4  -4\t4\n 5  -5\t5\n 6  -Es16\t6\n'
    content += b' 7  -7\t7\n 8  -8"e\t81  -11\t11\n 12  -12\t12\n'
    with pytest.raises(kv.DataError, match="Check its quotes"):  # the quote makes one row of many lines
        kv.load_csv(content)


def test_random_bytes_only_raise_data_error() -> None:
    rng = np.random.default_rng(20240601)
    for case in range(300):
        n = int(rng.integers(0, 600))
        low = 0 if case % 2 else 1  # half the cases without NUL bytes
        content = rng.integers(low, 256, n, dtype=np.uint8).tobytes()
        with contextlib.suppress(kv.DataError):
            _check_valid(kv.load_csv(content))


def test_structural_mutations_encodings_and_column_choices_only_raise_data_error_or_load() -> None:
    """Insert, delete and copy runs of bytes in files of several layouts and encodings."""
    rng = np.random.default_rng(11)
    bases = [
        b"x,y,note\n" + b"".join(b'%d,%d.5,"t, %d"\n' % (i, i * 3 % 7, i) for i in range(30)),
        b"# comment\r\na;b\r\n" + b"".join(b"%d;%d,25\r\n" % (i, i * i) for i in range(30)),
        b"a b c\n" + b"".join(b" %d  %d\t%d\n" % (i, -i, i) for i in range(30)),
        "t\tµ\n".encode("utf-16") + "".join(f"{i}\t{i * 2}\n" for i in range(30)).encode("utf-16-le"),
        "é|ü\n".encode("latin-1") + b"".join(b"%d|%d\n" % (i, i % 5) for i in range(30)),
    ]
    alphabet = list(b'0123456789.,;\t| \n\r-+eE"#naNIf\x00\xff\xfe')
    choices = [None, 0, 1, 2, -1, 7, "x", "b", "µ", 1.5]
    loaded = 0
    for case in range(400):
        content = bytearray(bases[case % len(bases)])
        for _ in range(int(rng.integers(1, 8))):
            pos = int(rng.integers(0, len(content) + 1))
            op = case % 3 if rng.random() < 0.5 else int(rng.integers(3))
            if op == 0:
                content[pos:pos] = bytes(rng.choice(alphabet, int(rng.integers(1, 6))).tolist())
            elif op == 1:
                del content[pos : pos + int(rng.integers(1, 30))]
            else:
                start = int(rng.integers(0, len(content) + 1))
                content[pos:pos] = content[start : start + int(rng.integers(1, 60))]
        x_column = choices[int(rng.integers(len(choices)))] if case % 4 == 0 else None
        try:
            _check_valid(kv.load_csv(bytes(content), x_column=x_column))
            loaded += 1
        except kv.DataError:
            pass
    assert loaded > 100


def test_the_kept_post_sample_is_the_computed_one_bit_for_bit() -> None:
    """The post's own sample is read from ``post_sample.npy`` (no compiled program): the same bits as the
    float32 computation, and any other (n, seed) is computed."""
    kept = data._kept_post_sample()
    assert kept is not None
    computed = kv.runtime.jax_setup.float64(data._computed_sample)(150, 2024)
    for a, b in zip(kept, computed, strict=True):
        assert a.dtype == b.dtype == np.float64 and np.array_equal(a, b)
    ds = kv.blog_data()
    assert np.array_equal(ds.y, computed[1]) and not np.array_equal(kv.blog_data(seed=7).y, ds.y)
