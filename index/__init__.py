"""Index stage: embeddings, the FAISS store and hybrid retrieval."""
