# Model figures and tables of the paper.
