"""Performance model: training step time, goodput, serving throughput and latency."""
