"""What is written: the fixed character vocabulary, transcripts of typed segments, the pre-training worksheets,
and text from outside made safe to show."""
