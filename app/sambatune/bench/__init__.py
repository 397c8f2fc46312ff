"""Measuring: agents driven from the app, statistics, results, bottleneck analysis.

How to run a benchmark (the CLI and the GUI do exactly this)::

    context = collect_context(transport)                    # bench.context: survey + smb.conf
    bench = NetBenchmark(transport, Method(runs=5, warmup=1), NetOptions(seconds=5),
                         context=context, cancel=token)     # or Disk/Smb/Dirscale/Sockbuf
    for event in bench.events():                            # bench.events: RunStarted, Sample,
        ...                                                 # RunFinished, Progress, Notice
    result = bench.result                                   # bench.records.BenchResult
    ResultsDatabase().save(result, context, note="before")  # bench.results_db

``bench.run(on_event)`` does the loop and returns the result. ``token.cancel()`` (any
thread) stops the agents on the server, which clean up; ``events()`` then raises
``Cancelled``. Failures are ``sambatune.errors`` types; a firewalled network test raises
``PortUnreachable`` and can be run again with ``NetOptions(through_ssh=True)``.
"""
