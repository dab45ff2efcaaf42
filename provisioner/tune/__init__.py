"""`ortprov tune MODEL`: measure a model on the CPU and on CUDA with provider-option variants, and explain.

    report.py     the data: variants asked for, what the tune child measured (frozen dataclasses, JSON)
    shapes.py     the input shapes: --shape / --shapes parsed and checked, the default spread, padding buckets
    variants.py   which variants to measure, in what order, and the combination of the winners
    analysis.py   measurements -> the table, the verdict, the explanations and the recommended options
    findings.py   the analysis as doctor findings (`doctor --model`: gpu-slower-than-cpu, nodes-on-cpu)
    runner.py     the edge: the conversation with standalone/tune_child.py in the target interpreter

Everything but runner.py is pure: tests drive it with recorded measurements (tests/data/tune/).
"""
