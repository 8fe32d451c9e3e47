"""costsim's own chart drawing: a figure described as panels of marks (bars, lines, bands,
markers, labels) on linear or log axes, laid out from measured text and written as SVG and PNG
without a plotting library (docs/report.md, "How charts are drawn").

``figure`` holds what a chart builder describes, ``layout`` places it, ``scene`` is the
placed picture (shapes and text in pixels), ``svg`` and ``png`` write a scene's bytes.
"""
