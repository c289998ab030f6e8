"""What a third party checks offline: signed notes and checkpoints, DSSE envelopes, bundles."""
