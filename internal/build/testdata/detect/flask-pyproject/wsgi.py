from site import app
