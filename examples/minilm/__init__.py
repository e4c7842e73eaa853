"""all-MiniLM-L6-v2, the whole sentence encoder: weights and tokenizer (:mod:`.weights`), an
independent float32 NumPy reference (:mod:`.reference`), a PyTorch reference
(:mod:`.torch_reference`, optional) and the model computed by pyasc kernels (:mod:`.model`)."""
