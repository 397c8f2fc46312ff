"""The Benchmarks page: the form, live plots, run tables, history and the bottleneck."""
