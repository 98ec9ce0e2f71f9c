print("tablesync")
