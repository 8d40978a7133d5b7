import numpy as np, cupynum as cp
rng=np.random.default_rng(1)
x=rng.standard_normal((4,7)).astype(np.float32)
a=cp.asarray(x)
for name in ("arctan2","power","subtract"):
    uf=getattr(np,name); cu=getattr(cp,name)
    with np.errstate(all="ignore"):
        print(name, "reduce1", np.max(np.abs(uf.reduce(x,axis=1)-cu.reduce(a,axis=1).get())),
          "reduce0", np.nanmax(np.abs(uf.reduce(x,axis=0)-cu.reduce(a,axis=0).get())),
          "acc", np.nanmax(np.abs(uf.accumulate(x,axis=1)-cu.accumulate(a,axis=1).get())),
          "elem", np.nanmax(np.abs(uf(x[:,0],x[:,1])-cu(a[:,0],a[:,1]).get())))
    print(uf.reduce(x,axis=1), cu.reduce(a,axis=1))
