"""Pictures of views and of the whole window, and the title line that says what a picture shows."""
