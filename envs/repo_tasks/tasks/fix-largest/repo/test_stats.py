import unittest

from stats import largest


class LargestTest(unittest.TestCase):
    def test_largest(self):
        self.assertEqual(largest([3, 9, 4]), 9)


if __name__ == "__main__":
    unittest.main()
