"""Independent Python reference of DaDiL (Montesuma et al., ECAI 2023) for
side-by-side timing and accuracy with the Go implementation.

Written for this project from the paper (Algorithms 1 and 2, DaDiL-R/E):
PyTorch autograd for the gradients, POT's exact ot.emd for every transport
plan, on DADIL_REF_THREADS threads (default 1). It is run by
`dadil bench dadil`, never by the library.

usage: dadil_reference.py SPLIT.npz K n nb lr epochs seed
prints one JSON object on the last line.
"""
import json
import os
import sys
import time

import numpy as np
import ot
import torch

torch.set_num_threads(int(os.environ.get("DADIL_REF_THREADS", "1")))
torch.set_default_dtype(torch.float64)


def proj_simplex(v):
    # Euclidean projection of each row of v onto the simplex (sort-based).
    n = v.shape[1]
    u, _ = torch.sort(v, dim=1, descending=True)
    css = torch.cumsum(u, dim=1) - 1.0
    ind = torch.arange(1, n + 1, dtype=v.dtype)
    cond = u - css / ind > 0
    rho = cond.sum(dim=1, keepdim=True)
    theta = torch.gather(css, 1, rho - 1) / rho
    return torch.clamp(v - theta, min=0.0)


def balanced(rng, y, nb, c):
    # nb indices, nb // c per class present (remainder to the first classes),
    # without replacement when a class has enough rows.
    classes = [k for k in range(c) if np.any(y == k)]
    q, r = divmod(nb, len(classes))
    out = []
    for i, k in enumerate(classes):
        rows = np.flatnonzero(y == k)
        want = q + (1 if i < r else 0)
        out.append(rng.choice(rows, size=want, replace=len(rows) < want))
    return np.concatenate(out)


def labeled_barycenter(XP, YP, alpha, nb, rng, n_iter=10, tol=1e-9):
    """Algorithm 1: support initialised from the atoms' points; plans solved
    without gradients; the returned support is differentiable with respect
    to the atoms and alpha through the last plans (envelope theorem)."""
    K = len(XP)
    u = np.full(nb, 1.0 / nb)
    with torch.no_grad():
        allX = torch.cat(XP)
        allY = torch.cat(YP)
        pick = rng.choice(allX.shape[0], size=nb, replace=False)
        XB, YB = allX[pick].clone(), allY[pick].clone()
        prev = np.inf
        for _ in range(n_iter):
            plans, J = [], 0.0
            for k in range(K):
                C = torch.cdist(XP[k], XB) ** 2
                beta = C.max()
                C = C + beta * torch.cdist(YP[k], YB) ** 2
                pi = torch.from_numpy(ot.emd(u, u, C.numpy()))
                plans.append(pi)
                J += float(alpha[k]) * float((pi * C).sum())
            XB = sum(alpha[k] * nb * plans[k].T @ XP[k] for k in range(K))
            YB = sum(alpha[k] * nb * plans[k].T @ YP[k] for k in range(K))
            if abs(J - prev) < tol:
                break
            prev = J
    XB = sum(alpha[k] * nb * plans[k].T @ XP[k] for k in range(K))
    YB = sum(alpha[k] * nb * plans[k].T @ YP[k] for k in range(K))
    return XB, YB


def wasserstein(XQ, YQ, XB, YB):
    nb = XQ.shape[0]
    C = torch.cdist(XQ, XB) ** 2
    if YQ is not None:
        beta = C.detach().max()
        C = C + beta * torch.cdist(YQ, YB) ** 2
    u = np.full(nb, 1.0 / nb)
    pi = torch.from_numpy(ot.emd(u, u, C.detach().numpy()))
    return (pi * C).sum()


def softmax_regression(X, T, l2=1e-3):
    # Multinomial softmax regression with (soft) targets and L2 penalty 1e-3
    # on the weights (the paper's single-layer perceptron), trained to
    # convergence with L-BFGS.
    d, c = X.shape[1], T.shape[1]
    W = torch.zeros(d, c, requires_grad=True)
    b = torch.zeros(c, requires_grad=True)
    opt = torch.optim.LBFGS([W, b], max_iter=500, tolerance_grad=1e-6, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        logp = torch.log_softmax(X @ W + b, dim=1)
        loss = -(T * logp).sum(dim=1).mean() + l2 * (W ** 2).sum()
        loss.backward()
        return loss

    opt.step(closure)
    return W.detach(), b.detach()


def main():
    path, K, n, nb, lr, epochs, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
    data = np.load(path)
    ns = int(data["n_sources"])
    c = int(data["classes"])
    Xs = [torch.from_numpy(data["Xs%d" % k]) for k in range(ns)]
    ys = [data["ys%d" % k].astype(int) for k in range(ns)]
    Xt = torch.from_numpy(data["Xt"])
    Xtest, ytest = torch.from_numpy(data["Xtest"]), data["ytest"].astype(int)
    d = Xt.shape[1]
    N = ns + 1
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)

    t0 = time.perf_counter()
    XP = [torch.randn(n, d, requires_grad=True) for _ in range(K)]
    YP = [torch.nn.functional.one_hot(torch.arange(n) % c, c).double().requires_grad_(True) for _ in range(K)]
    A = torch.full((N, K), 1.0 / K, requires_grad=True)
    opt = torch.optim.Adam(XP + YP + [A], lr=lr)
    Ys = [torch.nn.functional.one_hot(torch.from_numpy(y), c).double() for y in ys]
    history = []
    for _ in range(epochs):
        total = 0.0
        for _ in range(n // nb):
            opt.zero_grad()
            loss = 0.0
            for l in range(N):
                # Algorithm 2, lines 10-13: every domain draws its own
                # class-balanced batch from every atom.
                idx = [balanced(rng, YP[k].detach().argmax(1).numpy(), nb, c) for k in range(K)]
                XPb = [XP[k][idx[k]] for k in range(K)]
                YPb = [torch.softmax(YP[k][idx[k]], dim=1) for k in range(K)]
                if l < ns:
                    rows = balanced(rng, ys[l], nb, c)
                    XQ, YQ = Xs[l][rows], Ys[l][rows]
                else:
                    rows = rng.choice(Xt.shape[0], size=nb, replace=Xt.shape[0] < nb)
                    XQ, YQ = Xt[rows], None
                XB, YB = labeled_barycenter(XPb, YPb, A[l], nb, rng)
                loss = loss + wasserstein(XQ, YQ, XB, YB)
            loss = loss / N
            loss.backward()
            opt.step()
            with torch.no_grad():
                A.data = proj_simplex(A.data)
            total += float(loss) / (n // nb)
        history.append(total)
    fit = time.perf_counter() - t0

    t1 = time.perf_counter()
    with torch.no_grad():
        alpha = A[N - 1].detach()
        atomsX = [x.detach() for x in XP]
        atomsY = [torch.softmax(y.detach(), dim=1) for y in YP]
        XB, YB = labeled_barycenter(atomsX, atomsY, alpha, n, rng)
    XB, YB = XB.detach(), YB.detach()
    # The classifiers train on the argmax of the labels, as in the authors'
    # demonstration of DaDiL-R and DaDiL-E.
    hard = lambda Y: torch.nn.functional.one_hot(Y.argmax(1), c).double()
    Wr, br = softmax_regression(XB, hard(YB))
    pr = (Xtest @ Wr + br).argmax(1).numpy()
    probs = torch.zeros(Xtest.shape[0], c)
    for k in range(K):
        Wk, bk = softmax_regression(atomsX[k], hard(atomsY[k]))
        probs += alpha[k] * torch.softmax(Xtest @ Wk + bk, dim=1)
    pe = probs.argmax(1).numpy()
    classifiers = time.perf_counter() - t1
    print(json.dumps({
        "fit_seconds": fit, "classifier_seconds": classifiers, "total_seconds": fit + classifiers,
        "accuracy_r": 100.0 * float(np.mean(pr == ytest)), "accuracy_e": 100.0 * float(np.mean(pe == ytest)),
        "loss": history, "alpha_target": alpha.tolist(),
        "torch": torch.__version__, "pot": ot.__version__,
    }))


if __name__ == "__main__":
    main()
