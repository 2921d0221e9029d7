print("bgsim")
