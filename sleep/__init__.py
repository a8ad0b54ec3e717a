"""Sleep: the nightly cycle over agent transcripts (a later issue)."""
