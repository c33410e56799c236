"""Results the field published in its own harnesses' formats, read as data (`memeval locomo import`)."""
