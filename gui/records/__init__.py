"""What the app keeps for the user: history, glossary, translation memory."""
