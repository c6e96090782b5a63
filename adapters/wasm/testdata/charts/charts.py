# The chart set of TestMatplotlibChartsMatchNative: ten charts a code
# interpreter is typically asked for, saved under charts/ in the working
# directory. The same file draws the reference images natively:
#   python -m venv v && v/bin/pip install matplotlib==3.10.9 numpy==2.2.6 \
#     pandas==2.2.3 contourpy==1.3.3 kiwisolver==1.5.1 pillow==11.3.0
#   (cd adapters/wasm/testdata/charts && ../../../../v/bin/python charts.py && mv charts/*.png native/)
# (the SVG and PDF files are not compared: they embed the renderer's
# version and, for PDF, a creation date).
import os
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

# As matplotlib's own image tests do (matplotlib.testing.setup): glyphs
# unhinted, since FreeType's hinting changes between its versions (this
# runtime has 2.13.3, the wheels 2.6.1), and text sizes move layouts.
matplotlib.rcParams["text.hinting"] = "none"
matplotlib.rcParams["text.hinting_factor"] = 8
os.makedirs("charts", exist_ok=True)
rng = np.random.default_rng(0)
x = np.linspace(0, 10, 200)


def save(fig, name, *formats):
    for f in formats or ("png",):
        fig.savefig("charts/%s.%s" % (name, f))
    plt.close(fig)


fig, ax = plt.subplots()
ax.plot(x, np.sin(x), label="sin")
ax.plot(x, np.cos(x), "--", label="cos")
ax.legend()
ax.set_title("Line")
save(fig, "line")
ax = pd.DataFrame({"sales": [3, 7, 2, 5]}, index=["Q1", "Q2", "Q3", "Q4"]).plot.bar()
save(ax.figure, "bar")
fig, ax = plt.subplots()
ax.hist(rng.normal(size=1000), bins=30)
save(fig, "hist")
fig, ax = plt.subplots()
sc = ax.scatter(rng.random(100), rng.random(100), c=rng.random(100), cmap="viridis")
fig.colorbar(sc)
save(fig, "scatter")
fig, axs = plt.subplots(2, 2, layout="constrained")
for i, a in enumerate(axs.flat):
    a.plot(x, x**i)
    a.set_title("x**%d" % i)
save(fig, "grid")
X, Y = np.meshgrid(np.linspace(-3, 3, 50), np.linspace(-3, 3, 50))
Z = np.exp(-X**2 - Y**2)
fig, ax = plt.subplots()
ax.clabel(ax.contour(X, Y, Z, levels=8))
save(fig, "contour")
px, py = rng.random(200), rng.random(200)
fig, ax = plt.subplots()
ax.tricontourf(px, py, np.sin(6 * px) * np.cos(6 * py))
save(fig, "tricontour")
fig, ax = plt.subplots()
ax.imshow(Z, cmap="magma")
save(fig, "imshow")
fig, ax = plt.subplots()
ax.set_title("Température °C: ÄÖÜ αβγ")
ax.text(0.5, 0.5, "µ ± σ ≤ ∞", ha="center")
ax.set_xlabel(r"$\alpha^2 + \sqrt{x}$")
save(fig, "unicode")
fig, ax = plt.subplots()
ax.plot([1, 3, 2])
save(fig, "formats", "png", "svg", "pdf")
print(matplotlib.get_backend().lower())
print(sorted(os.listdir("charts")))
print(plt.get_fignums())

# The same drawings without text (axes off, no titles, legends, labels or
# colour bar): what is left is Agg's rendering of paths, markers, contours,
# triangulations and images, which must come out pixel for pixel as the
# wheels draw it.
def bare(name, draw, **kw):
    fig, ax = plt.subplots(**kw)
    draw(ax)
    for a in fig.axes:
        a.set_axis_off()
    fig.savefig("charts/bare-%s.png" % name)
    plt.close(fig)


bare("line", lambda ax: (ax.plot(x, np.sin(x)), ax.plot(x, np.cos(x), "--")))
bare("bar", lambda ax: ax.bar(["Q1", "Q2", "Q3", "Q4"], [3, 7, 2, 5]))
bare("hist", lambda ax: ax.hist(np.random.default_rng(0).normal(size=1000), bins=30))
bare("scatter", lambda ax: ax.scatter(*np.random.default_rng(1).random((2, 100)), c=np.random.default_rng(2).random(100)))
bare("contour", lambda ax: ax.contour(X, Y, Z, levels=8))
bare("tricontour", lambda ax: ax.tricontourf(px, py, np.sin(6 * px) * np.cos(6 * py)))
bare("imshow", lambda ax: ax.imshow(Z, cmap="magma"))
print(sorted(f for f in os.listdir("charts") if f.startswith("bare-")))
