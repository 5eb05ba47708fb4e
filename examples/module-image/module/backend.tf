# The backend block, alone in its file: local dry runs (--state FILE) replace it with a local
# state. Its settings come at run time from --backend-config files (partial configuration).
terraform {
  backend "kubernetes" {}
}
