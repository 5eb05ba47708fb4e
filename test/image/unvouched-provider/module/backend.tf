# Settings come from --backend-config files; the checks and dry runs never reach the backend.
terraform {
  backend "kubernetes" {}
}
