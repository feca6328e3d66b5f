"""The rules of the frame grammar, one module per family: what `FrameConstraint` asks about a step."""
