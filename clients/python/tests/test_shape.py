"""transformers' shaping around the ids, without a server: batch detection, truncation, padding
(sides, multiples, no pad token), attention and assistant masks, tensors, argument errors."""
import unittest
import warnings

from support import deltatok  # noqa: F401  (puts ../src on the path)
from deltatok._shape import BatchEncoding, chat_flags, mask_from_ranges, shape_encodings, split_conversations, to_id_list, to_tensor


class FakeTok:
    padding_side = "right"
    truncation_side = "right"
    pad_token_id = 0
    model_max_length = 8
    model_input_names = ["input_ids", "attention_mask"]


class ShapeTest(unittest.TestCase):
    def flags(self, tok=None, **kw):
        return chat_flags(tok or FakeTok(), kw.pop("padding", False), kw.pop("truncation", False), kw.pop("max_length", None),
                          kw.pop("return_tensors", None), kw or None)

    def test_batch_detection_is_transformers(self):
        one = [{"role": "user", "content": "x"}]
        self.assertEqual(split_conversations(one), ([one], False))
        self.assertEqual(split_conversations([one, one]), ([one, one], True))
        self.assertEqual(split_conversations((one,)), ([one], True))

        class Conversation:
            messages = one
        self.assertEqual(split_conversations([Conversation()]), ([one], True))
        with self.assertRaises(IndexError):
            split_conversations([])

    def test_truncation_and_padding(self):
        rows = [[1, 2, 3, 4, 5], [6, 7]]
        out = shape_encodings([r[:] for r in rows], None, self.flags(padding=True), True, FakeTok.model_input_names)
        self.assertEqual(out["input_ids"], [[1, 2, 3, 4, 5], [6, 7, 0, 0, 0]])
        self.assertEqual(out["attention_mask"], [[1] * 5, [1, 1, 0, 0, 0]])
        left = FakeTok()
        left.padding_side = "left"
        out = shape_encodings([r[:] for r in rows], [[0, 0, 1, 1, 1], [1, 0]], self.flags(left, padding="longest"), True, FakeTok.model_input_names)
        self.assertEqual(out["input_ids"][1], [0, 0, 0, 6, 7])
        self.assertEqual(out["assistant_masks"][1], [0, 0, 0, 1, 0])
        out = shape_encodings([r[:] for r in rows], None, self.flags(truncation=True, max_length=3), True, FakeTok.model_input_names)
        self.assertEqual(out["input_ids"], [[1, 2, 3], [6, 7]])
        tleft = FakeTok()
        tleft.truncation_side = "left"
        self.assertEqual(shape_encodings([[1, 2, 3, 4, 5]], None, self.flags(tleft, truncation=True, max_length=2), False,
                                         FakeTok.model_input_names)["input_ids"], [4, 5])
        # truncation without max_length: model_max_length (8)
        self.assertEqual(len(shape_encodings([list(range(20))], None, self.flags(truncation=True), False, FakeTok.model_input_names)["input_ids"]), 8)
        # padding to max_length, to a multiple
        self.assertEqual(shape_encodings([[1]], None, self.flags(padding="max_length", max_length=4), False, FakeTok.model_input_names)["input_ids"],
                         [1, 0, 0, 0])
        self.assertEqual(len(shape_encodings([[1, 2, 3]], None, self.flags(padding=True, pad_to_multiple_of=4), False,
                                             FakeTok.model_input_names)["input_ids"]), 4)

    def test_padding_needs_a_pad_token(self):
        tok = FakeTok()
        tok.pad_token_id = None
        with self.assertRaises(ValueError):
            shape_encodings([[1, 2], [3]], None, self.flags(tok, padding=True), True, FakeTok.model_input_names)
        # nothing to pad: no error
        shape_encodings([[1, 2]], None, self.flags(tok, padding=True), False, FakeTok.model_input_names)

    def test_max_length_padding_without_a_length_warns_and_does_not_pad(self):
        tok = FakeTok()
        tok.model_max_length = int(1e30)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = shape_encodings([[1], [2, 3]], None, self.flags(tok, padding="max_length"), True, FakeTok.model_input_names)
        self.assertEqual(out["input_ids"], [[1], [2, 3]])
        self.assertTrue(w)

    def test_unsupported_options_are_clear_errors(self):
        with self.assertRaises(ValueError):
            self.flags(padding="sideways")
        with self.assertRaises(ValueError):
            self.flags(truncation="only_second")
        with self.assertRaises(ValueError):
            self.flags(stride=2)
        with self.assertRaises(TypeError):
            self.flags(add_special_tokens=True)
        with self.assertRaises(ValueError):
            to_tensor([[1]], "tf")
        with self.assertRaises(ValueError):
            to_tensor([[1, 2], [3]], "np")

    def test_token_type_ids_when_the_class_has_them(self):
        tok = FakeTok()
        tok.model_input_names = ["input_ids", "token_type_ids", "attention_mask"]
        out = shape_encodings([[5, 6]], None, self.flags(tok), False, tok.model_input_names)
        self.assertEqual(list(out), ["input_ids", "token_type_ids", "attention_mask"])
        self.assertEqual(out["token_type_ids"], [0, 0])

    def test_batch_encoding_and_masks(self):
        be = BatchEncoding({"input_ids": [1, 2], "attention_mask": [1, 1]})
        self.assertEqual(be.input_ids, [1, 2])
        self.assertEqual(be["attention_mask"], [1, 1])
        self.assertEqual(list(be.keys()), ["input_ids", "attention_mask"])
        with self.assertRaises(AttributeError):
            be.nothing  # noqa: B018
        self.assertEqual(mask_from_ranges(6, [[1, 3], [4, 9]]), [0, 1, 1, 0, 1, 1])
        self.assertEqual(to_id_list((1, 2)), [1, 2])
        self.assertEqual(to_id_list(7), 7)
        with self.assertRaises(TypeError):
            to_id_list("12")

    def test_numpy_tensors(self):
        try:
            import numpy as np
        except ImportError:
            self.skipTest("numpy is not installed")
        be = BatchEncoding({"input_ids": [1, 2]}, tensor_type="np", prepend_batch_axis=True)
        self.assertEqual(be["input_ids"].shape, (1, 2))
        self.assertEqual(be["input_ids"].dtype, np.int64)

    def test_torch_tensors_or_a_clear_import_error(self):
        try:
            import torch  # noqa: F401
        except ImportError:
            with self.assertRaises(ImportError) as cm:
                to_tensor([[1]], "pt")
            self.assertIn("PyTorch", str(cm.exception))
            return
        self.assertEqual(tuple(to_tensor([[1, 2]], "pt").shape), (1, 2))


if __name__ == "__main__":
    unittest.main()
