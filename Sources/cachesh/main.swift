print("cachesh: not built yet")
