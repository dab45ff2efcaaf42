"""A Kubernetes cluster planned from the labels NVIDIA's GPU Feature Discovery puts on its nodes (docs/cluster.md).

Pure, but for `kubectl.py` (the edge that asks a live cluster through `kubectl`):
- `labels.py`: the label keys GFD and Kubernetes write, and the formats of their values (data, with sources);
- `nodelist.py`: a NodeList's items, one at a time, from its text in chunks (memory: one item, not the list);
- `nodes.py`: one node's labels to its facts (NodeFacts), or the reason it is skipped;
- `classes.py`: nodes with the same facts to groups, groups with the same plan to classes, `--one-image`;
- `constraints.py`: the node affinity that keeps a class's image on the nodes that can run it.
"""
