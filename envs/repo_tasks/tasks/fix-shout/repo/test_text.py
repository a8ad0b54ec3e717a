import unittest

from text import shout


class ShoutTest(unittest.TestCase):
    def test_shout(self):
        self.assertEqual(shout("hi there"), "HI THERE")


if __name__ == "__main__":
    unittest.main()
