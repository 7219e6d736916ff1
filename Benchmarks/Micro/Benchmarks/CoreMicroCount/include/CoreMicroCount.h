// Nothing to call: the hook in CoreMicroCount.c runs on its own when the executable loads.
