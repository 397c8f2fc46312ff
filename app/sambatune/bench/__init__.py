"""Measuring: agents driven from the app, statistics, results, bottleneck analysis."""
