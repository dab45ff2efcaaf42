"""Renderers: results, plans and reports to text or JSON, and plans to recipes. Pure functions of data.

output.py is the one output path (stdout: the result; stderr: errors, notes, progress); detect, plan,
recipes, verify, doctor, matrix and apply render one kind of result each. Renderers import the data model
(the core), never the machine, the network or the CLI.
"""

RECIPE_FORMATS = ("pip", "uv", "requirements", "conda", "dockerfile")  # the recipes render/recipes.py writes
DOCKERFILE_BASES = ("slim", "cuda")  # slim Python + NVIDIA wheels, or an nvidia/cuda cuDNN runtime image
