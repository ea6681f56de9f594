"""The nouns of the screen: each takes its data in its constructor or a
`show(...)` call and reports what happened as past-tense messages."""
