"""Recording a live PyTorch training step as a graph (needs torch, imported by the modules that
run it): `step_recorder` watches one step at the ATen dispatch level, `module_paths` names each
op by its module, `storage_ledger` follows each storage from creation to its last reference,
`training_step` builds the step the shell records, and `dataflow` frees each buffer at its last
access instead (the lifetimes a re-ordered step would have)."""
