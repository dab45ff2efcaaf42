"""`ortprov tune MODEL`: measure a model on the CPU and on CUDA with provider-option variants, check every
variant's outputs against the CPU's, and explain.

    report.py     the data: variants asked for, what the tune child measured and checked (frozen dataclasses, JSON)
    shapes.py     the input shapes: --shape / --shapes parsed and checked, the default spread, padding buckets,
                  what the generated inputs look like (page, line, random)
    variants.py   which variants to measure, in what order, and the combination of the winners that keep the answers
    analysis.py   measurements -> the table and the verdict (the best variant that keeps the answers, the fastest)
    explain.py    why: each explanation quotes its measurement
    agreement.py  a variant's outputs against the reference's, in words
    recommend.py  the winning options three ways (Python with the per-shape helper, RapidOCR, JSON)
    findings.py   the analysis as doctor findings (`doctor --model`)
    preflight.py  what stops a tune (no onnxruntime, a model too new), as the user's problem
    runner.py     the edge: the steps of a tune, the budget, the reference folder
    child.py      the edge: standalone/tune_child.py in the target interpreter, as a process

Everything but runner.py and child.py is pure: tests drive it with recorded and hand-made measurements.
"""
