import unittest

from seq import last


class LastTest(unittest.TestCase):
    def test_last(self):
        self.assertEqual(last([1, 2, 3]), 3)


if __name__ == "__main__":
    unittest.main()
