application = None
