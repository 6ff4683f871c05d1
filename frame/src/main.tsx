import './styles.css'
export {}
